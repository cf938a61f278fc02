import { createHmac, timingSafeEqual } from 'node:crypto'
import { ORDER_STATUSES, type OrderStatus } from './order-schemas.js'

/** Where a page of orders starts: after `afterId`, within the `status` and `petId` filters (as the query wrote them). */
export interface OrderCursorPosition {
  afterId: number
  status: OrderStatus | undefined
  petId: string | undefined
}

const TAG_BYTES = 16

/** Opaque, tamper-evident cursors of listOrders: the position plus an HMAC under a secret every instance shares. */
export class OrderCursorCodec {
  readonly #secret: Buffer

  constructor (secret: string) {
    this.#secret = Buffer.from(secret, 'base64url')
    if (this.#secret.length < 32) throw new Error('cursor secret must be at least 32 bytes')
  }

  encode (position: OrderCursorPosition): string {
    const payload = `o1.${position.afterId}.${position.status ?? ''}.${position.petId ?? ''}`
    return `${Buffer.from(payload, 'utf8').toString('base64url')}.${this.#tag(payload).toString('base64url')}`
  }

  /** The position, or undefined when the cursor is garbled or was not issued by this service. */
  decode (cursor: string): OrderCursorPosition | undefined {
    const [encodedPayload, encodedTag, ...rest] = cursor.split('.')
    if (encodedPayload === undefined || encodedTag === undefined || rest.length > 0) return undefined
    const payload = Buffer.from(encodedPayload, 'base64url').toString('utf8')
    const tag = Buffer.from(encodedTag, 'base64url')
    const expected = this.#tag(payload)
    if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) return undefined
    const match = /^o1\.(\d{1,16})\.([a-z]*)\.(\d{0,19})$/.exec(payload)
    if (match === null) return undefined
    const afterId = Number(match[1])
    const status = match[2] === '' ? undefined : match[2] as OrderStatus
    if (!Number.isSafeInteger(afterId) || (status !== undefined && !ORDER_STATUSES.includes(status))) return undefined
    return { afterId, status, petId: match[3] === '' ? undefined : match[3] }
  }

  #tag (payload: string): Buffer {
    return createHmac('sha256', this.#secret).update(payload).digest().subarray(0, TAG_BYTES)
  }
}
