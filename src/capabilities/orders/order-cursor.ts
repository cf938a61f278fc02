import { SignedPayloads } from '../../infra/credentials/signed-payload.js'
import { ORDER_STATUSES, type OrderStatus } from './order-schemas.js'

/** Where a page of orders starts: after `afterId`, within the `status` and `petId` filters (as the query wrote them). */
export interface OrderCursorPosition {
  afterId: number
  status: OrderStatus | undefined
  petId: string | undefined
}

/** Opaque, tamper-evident cursors of listOrders: the position, signed under a secret every instance shares. */
export class OrderCursorCodec {
  readonly #signed: SignedPayloads

  constructor (secret: string) {
    this.#signed = new SignedPayloads(secret)
  }

  encode (position: OrderCursorPosition): string {
    return this.#signed.sign(`o1.${position.afterId}.${position.status ?? ''}.${position.petId ?? ''}`)
  }

  /** The position, or undefined when the cursor is garbled or was not issued by this service. */
  decode (cursor: string): OrderCursorPosition | undefined {
    const payload = this.#signed.verify(cursor)
    const match = payload === undefined ? null : /^o1\.(\d{1,16})\.([a-z]*)\.(\d{0,19})$/.exec(payload)
    if (match === null) return undefined
    const afterId = Number(match[1])
    const status = match[2] === '' ? undefined : match[2] as OrderStatus
    if (!Number.isSafeInteger(afterId) || (status !== undefined && !ORDER_STATUSES.includes(status))) return undefined
    return { afterId, status, petId: match[3] === '' ? undefined : match[3] }
  }
}
