import type { FastifyReply } from 'fastify'
import { strongEtag } from '../../infra/http/etag.js'
import type { Order } from './order-schemas.js'

/** An order as the route's serializer for the reply's status writes it: the bytes that are sent, and tagged. */
export function serializeOrder (reply: FastifyReply, order: Order): string {
  const body = reply.serialize(order)
  if (typeof body !== 'string') throw new Error('the Order serializer did not produce text')
  return body
}

/** Sends a serialized order with its strong ETag: the tag getOrder gives the same order. */
export function sendTagged (reply: FastifyReply, body: string): FastifyReply {
  return reply.header('etag', strongEtag(body)).type('application/json; charset=utf-8').send(body)
}
