import { createHmac, randomBytes } from 'node:crypto'

/** The prefix of a Standard Webhooks signing secret: `whsec_` + base64 of the key bytes. */
export const SECRET_PREFIX = 'whsec_'
// 32 random bytes: within the 24–64 the specification asks for, as long as an HMAC-SHA256 key needs
const SECRET_BYTES = 32

/** A new signing secret in the Standard Webhooks form. */
export function generateWebhookSecret (): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

function keyOf (secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_')
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
}

/**
 * The `webhook-signature` header of a request (Standard Webhooks): `v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">` under each secret, space-separated, so during a rotation either secret verifies.
 */
export function signWebhook (secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`
  return secrets.map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`).join(' ')
}
