import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

/** The prefix of a Standard Webhooks symmetric signing secret: `whsec_` + base64 of the key bytes (signatures `v1`, HMAC-SHA256). */
export const SECRET_PREFIX = 'whsec_'
/** The prefix of an ed25519 private key (Standard Webhooks' asymmetric secret, signatures `v1a`): `whsk_` + base64 of its 32-byte seed. */
export const PRIVATE_KEY_PREFIX = 'whsk_'
/** The prefix of an ed25519 public key, what receivers verify `v1a` signatures with: `whpk_` + base64 of its 32 bytes (RFC 8032). */
export const PUBLIC_KEY_PREFIX = 'whpk_'
// 32 random bytes: within the 24–64 the specification asks for, as long as an HMAC-SHA256 key needs
const SECRET_BYTES = 32

/** How an endpoint's requests are signed: HMAC-SHA256 under a shared secret (`v1`), or ed25519 (`v1a`), which receivers verify with a public key. */
export const SIGNING_SCHEMES = ['hmac-sha256', 'ed25519'] as const
export type SigningScheme = typeof SIGNING_SCHEMES[number]

/** What signs an endpoint's requests, and what its receiver is given to verify them: the secret itself for HMAC, the public key for ed25519. */
export interface SigningKeys {
  /** Kept in the store: `whsec_…` or `whsk_…`. */
  secret: string
  /** `whpk_…` for ed25519; undefined for HMAC, whose receiver holds the secret. */
  publicKey: string | undefined
}

/** A new signing secret in the Standard Webhooks form. */
export function generateWebhookSecret (): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

/** New keys of `scheme`: a `whsec_` secret, or an ed25519 key pair (`whsk_`, `whpk_`). */
export function generateSigningKeys (scheme: SigningScheme): SigningKeys {
  if (scheme === 'hmac-sha256') return { secret: generateWebhookSecret(), publicKey: undefined }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const { d, x } = privateKey.export({ format: 'jwk' })
  if (d === undefined || x === undefined) throw new Error('an ed25519 key pair without its parts')
  return { secret: PRIVATE_KEY_PREFIX + Buffer.from(d, 'base64url').toString('base64'), publicKey: publicKeyText(publicKey) }
}

function publicKeyText (key: KeyObject): string {
  const { x } = key.export({ format: 'jwk' })
  if (x === undefined) throw new Error('an ed25519 public key without its bytes')
  return PUBLIC_KEY_PREFIX + Buffer.from(x, 'base64url').toString('base64')
}

// PKCS #8 of an ed25519 private key is this fixed prefix and the 32-byte seed (RFC 8410 §7)
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
// parsed keys, by secret: one parse per endpoint rather than per request (a handful of endpoints, each a few keys over rotations)
const privateKeys = new Map<string, KeyObject>()
const MAX_PARSED_KEYS = 1024

function privateKeyOf (secret: string): KeyObject {
  let key = privateKeys.get(secret)
  if (key === undefined) {
    const seed = Buffer.from(secret.slice(PRIVATE_KEY_PREFIX.length), 'base64')
    if (seed.length !== 32) throw new Error('an ed25519 private key (whsk_) has 32 bytes')
    key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' })
    if (privateKeys.size >= MAX_PARSED_KEYS) privateKeys.clear()
    privateKeys.set(secret, key)
  }
  return key
}

/** The public key (`whpk_…`) of an ed25519 private key (`whsk_…`). */
export function publicKeyOf (secret: string): string {
  return publicKeyText(createPublicKey(privateKeyOf(secret)))
}

function hmacKeyOf (secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
}

/**
 * The `webhook-signature` header of a request (Standard Webhooks), over `id.timestamp.body`, one signature
 * under each secret, space-separated, so during a rotation either verifies: `v1,<base64 HMAC-SHA256>` for a
 * `whsec_` secret, `v1a,<base64 ed25519 signature>` for a `whsk_` private key.
 */
export function signWebhook (secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`
  return secrets.map((secret) => {
    if (secret.startsWith(SECRET_PREFIX)) return `v1,${createHmac('sha256', hmacKeyOf(secret)).update(content).digest('base64')}`
    if (secret.startsWith(PRIVATE_KEY_PREFIX)) return `v1a,${sign(null, Buffer.from(content), privateKeyOf(secret)).toString('base64')}`
    throw new Error('a webhook secret starts with whsec_ or whsk_')
  }).join(' ')
}
