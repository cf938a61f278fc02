import { createHmac, timingSafeEqual } from 'node:crypto'

const TAG_BYTES = 16

/**
 * Opaque, tamper-evident tokens (list cursors): a payload and its HMAC under a secret every instance
 * shares, so each accepts the others' tokens and nobody can forge or alter one.
 */
export class SignedPayloads {
  readonly #secret: Buffer

  constructor (secret: string) {
    this.#secret = Buffer.from(secret, 'base64url')
    if (this.#secret.length < 32) throw new Error('cursor secret must be at least 32 bytes')
  }

  sign (payload: string): string {
    return `${Buffer.from(payload, 'utf8').toString('base64url')}.${this.#tag(payload).toString('base64url')}`
  }

  /** The payload, or undefined when the token is garbled or was not signed with this secret. */
  verify (token: string): string | undefined {
    const [encodedPayload, encodedTag, ...rest] = token.split('.')
    if (encodedPayload === undefined || encodedTag === undefined || rest.length > 0) return undefined
    const payload = Buffer.from(encodedPayload, 'base64url').toString('utf8')
    const tag = Buffer.from(encodedTag, 'base64url')
    const expected = this.#tag(payload)
    return tag.length === expected.length && timingSafeEqual(tag, expected) ? payload : undefined
  }

  #tag (payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(payload).digest().subarray(0, TAG_BYTES)
  }
}
