import { createHmac, timingSafeEqual } from 'node:crypto'
import { PET_STATUSES, type PetStatus } from './pet-schemas.js'

/** Where a page starts: after `afterId`, within the `status` filter (none: all pets). */
export interface CursorPosition {
  afterId: number
  status: PetStatus | undefined
}

const VERSION = 'v1'
const TAG_BYTES = 16

/**
 * Opaque, tamper-evident list cursors: the position plus an HMAC under a secret
 * kept in the store, so every instance on the same store accepts each other's cursors.
 */
export class CursorCodec {
  readonly #secret: Buffer

  constructor (secret: string) {
    this.#secret = Buffer.from(secret, 'base64url')
    if (this.#secret.length < 32) throw new Error('cursor secret must be at least 32 bytes')
  }

  encode (position: CursorPosition): string {
    const payload = `${VERSION}.${position.afterId}.${position.status ?? ''}`
    return `${Buffer.from(payload, 'utf8').toString('base64url')}.${this.#tag(payload).toString('base64url')}`
  }

  /** The position, or undefined when the cursor is garbled or was not issued by this service. */
  decode (cursor: string): CursorPosition | undefined {
    const [encodedPayload, encodedTag, ...rest] = cursor.split('.')
    if (encodedPayload === undefined || encodedTag === undefined || rest.length > 0) return undefined
    const payload = Buffer.from(encodedPayload, 'base64url').toString('utf8')
    const tag = Buffer.from(encodedTag, 'base64url')
    const expected = this.#tag(payload)
    if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) return undefined
    const match = /^v1\.(\d{1,16})\.([a-z]*)$/.exec(payload)
    if (match === null) return undefined
    const afterId = Number(match[1])
    const status = match[2] === '' ? undefined : match[2] as PetStatus
    if (!Number.isSafeInteger(afterId) || (status !== undefined && !PET_STATUSES.includes(status))) return undefined
    return { afterId, status }
  }

  #tag (payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(payload).digest().subarray(0, TAG_BYTES)
  }
}
