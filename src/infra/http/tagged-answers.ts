import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { PATTERN_DESCRIPTION_KEYWORD } from '../schemas/keywords.js'
import { ifMatchMatches, ifNoneMatchMatches, strongEtag } from './etag.js'

/**
 * Conditional requests, written once for every resource that is answered with its `ETag` (pets,
 * orders): the tag of the bytes the route's own serializer writes, the conditional GET (`If-None-Match`,
 * 304) and the conditional change (`If-Match`, checked on the resource inside the store's transaction).
 */

// room for a list of dozens of tags, well under Node's 16 KiB of headers
export const ENTITY_TAG_LIST_MAX_LENGTH = 4096

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"'

/**
 * What `If-Match` may hold (RFC 9110 §13.1.1): `*`, or a comma-separated list of entity tags
 * (empty list elements are allowed, as §5.6.1 asks of recipients).
 */
export const ENTITY_TAG_LIST_PATTERN = `^[ \\t]*(?:\\*|(?:,[ \\t]*)*${ENTITY_TAG}(?:[ \\t]*,(?:[ \\t]*${ENTITY_TAG})?)*)[ \\t]*$`

/** The `If-None-Match` request header of a conditional GET. */
export function ifNoneMatchHeaderSchema () {
  return Type.String({
    maxLength: ENTITY_TAG_LIST_MAX_LENGTH,
    description: `An \`ETag\` from an earlier answer (or a list of them, or \`*\`): when it still matches, the answer is 304 with no body. At most ${ENTITY_TAG_LIST_MAX_LENGTH} characters.`,
    examples: ['"3q2-7w"']
  })
}

/** The `If-Match` request header of a conditional change; `description` says what the tag is of, ending with a sentence. */
export function ifMatchHeaderSchema (description: string) {
  return Type.String({
    maxLength: ENTITY_TAG_LIST_MAX_LENGTH,
    pattern: ENTITY_TAG_LIST_PATTERN,
    [PATTERN_DESCRIPTION_KEYWORD]: '* or a comma-separated list of quoted entity tags, such as "3q2-7w"',
    description: `${description} At most ${ENTITY_TAG_LIST_MAX_LENGTH} characters.`,
    examples: ['"3q2-7w"']
  })
}

/** A resource as the route's serializer for the reply's status writes it: the bytes that are sent, and tagged. */
export function serializeAnswer (reply: FastifyReply, resource: unknown, schemaName: string): string {
  const body = reply.serialize(resource)
  if (typeof body !== 'string') throw new Error(`the ${schemaName} serializer did not produce text`)
  return body
}

/** Sends a serialized resource with its strong ETag: the tag a conditional GET gives the same resource. */
export function sendTagged (reply: FastifyReply, body: string): FastifyReply {
  return reply.header('etag', strongEtag(body)).type('application/json; charset=utf-8').send(body)
}

/**
 * The `If-Match` check of a change, for the store to make on the resource as it is inside its transaction
 * (`tagged` serializes it exactly as the answer would be): undefined when the request is unconditional.
 */
export function ifMatchPrecondition<T> (ifMatch: string | undefined, tagged: (current: T) => string): ((current: T) => boolean) | undefined {
  return ifMatch === undefined ? undefined : (current) => ifMatchMatches(ifMatch, strongEtag(tagged(current)))
}

/**
 * The conditional GET, for a route's onSend: a 200's bytes get their strong `ETag` (and `headers`, such as
 * Cache-Control); when `If-None-Match` matches that tag, the answer becomes a 304. Returns the payload to send.
 * The tag is of the bytes, so it changes whenever a change changes the resource (the change answers the same tag).
 */
export function answerConditionalGet (request: FastifyRequest, reply: FastifyReply, payload: unknown, headers?: Readonly<Record<string, string>>): unknown {
  if (reply.statusCode !== 200 || typeof payload !== 'string') return payload
  const etag = strongEtag(payload)
  reply.header('etag', etag)
  if (headers !== undefined) reply.headers(headers)
  const ifNoneMatch = request.headers['if-none-match']
  if (!ifNoneMatchMatches(typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined, etag)) return payload
  // a 304 has no body, and no Content-Length unless it is the 200's (RFC 9110 §8.6): GET sends none;
  // for HEAD, Fastify's own HEAD hook measures the payload (the 200's) and sends nothing
  reply.code(304).removeHeader('content-type')
  return request.method === 'HEAD' ? payload : null
}
