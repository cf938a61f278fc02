import { SignedPayloads } from '../../infra/credentials/signed-payload.js'
import { PET_STATUSES, type PetStatus } from './pet-schemas.js'

/** Where a page starts: after `afterId`, within the `status` filter (none: all pets). */
export interface CursorPosition {
  afterId: number
  status: PetStatus | undefined
}

const VERSION = 'v1'

/**
 * Opaque, tamper-evident list cursors: the position, signed under a secret kept in the store, so every
 * instance on the same store accepts each other's cursors.
 */
export class CursorCodec {
  readonly #signed: SignedPayloads

  constructor (secret: string) {
    this.#signed = new SignedPayloads(secret)
  }

  encode (position: CursorPosition): string {
    return this.#signed.sign(`${VERSION}.${position.afterId}.${position.status ?? ''}`)
  }

  /** The position, or undefined when the cursor is garbled or was not issued by this service. */
  decode (cursor: string): CursorPosition | undefined {
    const payload = this.#signed.verify(cursor)
    const match = payload === undefined ? null : /^v1\.(\d{1,16})\.([a-z]*)$/.exec(payload)
    if (match === null) return undefined
    const afterId = Number(match[1])
    const status = match[2] === '' ? undefined : match[2] as PetStatus
    if (!Number.isSafeInteger(afterId) || (status !== undefined && !PET_STATUSES.includes(status))) return undefined
    return { afterId, status }
  }
}
