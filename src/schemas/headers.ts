import { Type } from '@sinclair/typebox'
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_MS } from '../idempotency/policy.js'
import { PATTERN_DESCRIPTION_KEYWORD } from './keywords.js'

/** Request headers of `createPet` (names in lower case: Node hands them to validation so). */
export const CreatePetHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    // length and characters are checked by parseIdempotencyKey (src/idempotency.ts): one message says what is allowed
    description: 'Makes the create safe to retry (IETF httpapi Idempotency-Key draft): a unique value per new pet, e.g. a UUID, ' +
      `as a bare token or a quoted string, 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, quotes or backslashes. ` +
      `A repeat with the same key and body, from the same API key within ${IDEMPOTENCY_TTL_MS / 3_600_000} hours, is answered with the first answer ` +
      'and `Idempotent-Replayed: true`, creating nothing; the same key with another body is 422 `idempotency_key_reused`; ' +
      'a repeat while the first is still being processed is 409 `idempotency_request_in_progress`.'
  }))
})

/** Request headers of `getPet`. */
export const GetPetHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    description: 'An `ETag` from an earlier answer (or a list of them, or `*`): when it still matches, the answer is 304 with no body.'
  }))
})

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"'

/**
 * What `If-Match` may hold (RFC 9110 §13.1.1): `*`, or a comma-separated list of entity tags
 * (empty list elements are allowed, as §5.6.1 asks of recipients).
 */
export const ENTITY_TAG_LIST_PATTERN = `^[ \\t]*(?:\\*|(?:,[ \\t]*)*${ENTITY_TAG}(?:[ \\t]*,(?:[ \\t]*${ENTITY_TAG})?)*)[ \\t]*$`

/** Request headers of `updatePet`. */
export const UpdatePetHeadersSchema = Type.Object({
  'if-match': Type.Optional(Type.String({
    pattern: ENTITY_TAG_LIST_PATTERN,
    [PATTERN_DESCRIPTION_KEYWORD]: '* or a comma-separated list of quoted entity tags, such as "3q2-7w"',
    description: 'Makes the change conditional: the `ETag` of the pet as the client last saw it (from `updatePet` or `getPet`), ' +
      'a list of tags, or `*` (any current pet). When the pet\'s current tag is not among them (strong comparison: a `W/` tag never matches), ' +
      'the answer is 412 `precondition_failed` and nothing changes.'
  }))
})
