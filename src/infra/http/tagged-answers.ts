import { hash } from 'node:crypto'
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

/**
 * How a resource's answers are tagged: by default ({@link BYTES_TAGGING}) the strong tag of the bytes, which
 * `If-Match` must equal. A resource may tag otherwise (a webhook endpoint's tag has a part for its settings, which
 * `If-Match` compares, and one for its health, which every delivery changes).
 */
export interface EntityTagging {
  /** The tag of an answer's body. */
  tagOf: (body: string) => string
  /** Whether `If-Match` (well-formed: its schema checked it) holds for the resource whose tag is now `current`. */
  ifMatchHolds: (ifMatch: string, current: string) => boolean
}

/** The strong tag of the bytes, compared whole (strong comparison): every resource's unless it says otherwise. */
export const BYTES_TAGGING: EntityTagging = { tagOf: strongEtag, ifMatchHolds: ifMatchMatches }

// a part of a two-part tag: 27 base64url characters of SHA-256, as long as a tag of one part (etag.ts)
const TAG_PART_LENGTH = 27

function tagPart (text: string): string {
  return hash('sha256', text, 'base64url').slice(0, TAG_PART_LENGTH)
}

/** Whether `If-Match` (well-formed) holds for a resource whose tag's first part is `first`: `*`, or a strong tag of two parts starting with it. */
function firstPartMatches (ifMatch: string, first: string): boolean {
  const trimmed = ifMatch.trim()
  if (trimmed === '*') return true
  for (const match of trimmed.matchAll(/(W\/)?"([^"]*)"/g)) {
    if (match[1] === undefined && match[2]?.length === 2 * TAG_PART_LENGTH && match[2].startsWith(first)) return true
  }
  return false
}

/** The texts a resource's two-part tag is made of: what a change may be conditional on, then what moves by itself. */
export type TagParts = readonly [settled: string, moving: string]

/** {@link EntityTagging} in two parts, and the `If-Match` check of a store that holds the settled part alone. */
export interface TwoPartTagging extends EntityTagging {
  /** Whether `If-Match` holds for the resource whose settled part is `settled` (the text {@link TagParts} gives). */
  ifMatchHoldsFor: (ifMatch: string, settled: string) => boolean
}

/**
 * Strong tags in two parts, for a resource part of which moves without a request changing it (a webhook endpoint's
 * health with every delivery, a category's pet counts with every change of its pets): a conditional GET sees either
 * change (a 304 only while neither moved), and a change's `If-Match` compares the settled part alone, so a change made
 * with a tag read a moment before the other part moved does not fail for it. A weak tag (`W/`) never matches.
 * `partsOf` reads the two texts from an answer's body.
 */
export function twoPartTagging (partsOf: (body: string) => TagParts): TwoPartTagging {
  return {
    tagOf: (body) => {
      const [settled, moving] = partsOf(body)
      return `"${tagPart(settled)}${tagPart(moving)}"`
    },
    ifMatchHolds: (ifMatch, current) => firstPartMatches(ifMatch, current.slice(1, 1 + TAG_PART_LENGTH)),
    ifMatchHoldsFor: (ifMatch, settled) => firstPartMatches(ifMatch, tagPart(settled))
  }
}

/** A resource as the route's serializer for the reply's status writes it: the bytes that are sent, and tagged. */
export function serializeAnswer (reply: FastifyReply, resource: unknown, schemaName: string): string {
  const body = reply.serialize(resource)
  if (typeof body !== 'string') throw new Error(`the ${schemaName} serializer did not produce text`)
  return body
}

/** Sends a serialized resource with its ETag: the tag a conditional GET gives the same resource. */
export function sendTagged (reply: FastifyReply, body: string, tagging: EntityTagging = BYTES_TAGGING): FastifyReply {
  return reply.header('etag', tagging.tagOf(body)).type('application/json; charset=utf-8').send(body)
}

/**
 * The `If-Match` check of a change, for the store to make on the resource as it is inside its transaction
 * (`tagged` serializes it exactly as the answer would be): undefined when the request is unconditional.
 */
export function ifMatchPrecondition<T> (ifMatch: string | undefined, tagged: (current: T) => string, tagging: EntityTagging = BYTES_TAGGING): ((current: T) => boolean) | undefined {
  return ifMatch === undefined ? undefined : (current) => tagging.ifMatchHolds(ifMatch, tagging.tagOf(tagged(current)))
}

/**
 * The conditional GET, for a route's onSend: a 200's bytes get their strong `ETag` (and `headers`, such as
 * Cache-Control); when `If-None-Match` matches that tag, the answer becomes a 304. Returns the payload to send.
 * `tagging`: how the resource is tagged, by default the strong tag of the bytes.
 * The tag is of the bytes, so it changes whenever a change changes the resource (the change answers the same tag).
 */
export function answerConditionalGet (request: FastifyRequest, reply: FastifyReply, payload: unknown, headers?: Readonly<Record<string, string>>,
  tagging: EntityTagging = BYTES_TAGGING): unknown {
  if (reply.statusCode !== 200 || typeof payload !== 'string') return payload
  const etag = tagging.tagOf(payload)
  reply.header('etag', etag)
  if (headers !== undefined) reply.headers(headers)
  const ifNoneMatch = request.headers['if-none-match']
  if (!ifNoneMatchMatches(typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined, etag)) return payload
  // a 304 has no body, and no Content-Length unless it is the 200's (RFC 9110 §8.6): GET sends none;
  // for HEAD, Fastify's own HEAD hook measures the payload (the 200's) and sends nothing
  reply.code(304).removeHeader('content-type')
  return request.method === 'HEAD' ? payload : null
}
