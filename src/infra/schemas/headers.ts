import { Type } from '@sinclair/typebox'
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_MS } from '../../capabilities/idempotency/policy.js'
import { PATTERN_DESCRIPTION_KEYWORD } from './keywords.js'

// visible ASCII without space, quote and backslash: a UUID, a ULID or any random token fits
const KEY_CHARACTER = '[\\x21\\x23-\\x5B\\x5D-\\x7E]'
const KEY_TOKEN = `${KEY_CHARACTER}{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}`

/**
 * What an `Idempotency-Key` header may hold: the key as a bare token (as most clients send it) or
 * as the IETF draft's structured-field string (`"…"`). The one definition: validation checks it,
 * and the key's parser (src/idempotency/idempotency-key.ts) reads the key out of it.
 */
export const IDEMPOTENCY_KEY_PATTERN = `^(?:${KEY_TOKEN}|"${KEY_TOKEN}")$`

/** Request headers of `createPet` (names in lower case: Node hands them to validation so). */
export const CreatePetHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(Type.String({
    minLength: 1,
    // the quoted form adds its two quotes
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH + 2,
    pattern: IDEMPOTENCY_KEY_PATTERN,
    [PATTERN_DESCRIPTION_KEYWORD]: `an Idempotency-Key of 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, quotes or backslashes (e.g. a UUID), bare or in double quotes`,
    description: 'Makes the create safe to retry (IETF httpapi Idempotency-Key draft): a unique value per new pet, e.g. a UUID, ' +
      `as a bare token or a quoted string, 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, quotes or backslashes. ` +
      `A repeat with the same key and body, from the same API key within ${IDEMPOTENCY_TTL_MS / 3_600_000} hours, is answered with the first answer ` +
      'and `Idempotent-Replayed: true`, creating nothing; the same key with another body is 422 `idempotency_key_reused`; ' +
      'a repeat while the first is still being processed is 409 `idempotency_request_in_progress`.',
    examples: ['8e03978e-40d5-43e8-bc93-6894a57f9324']
  }))
})

// room for a list of dozens of tags, well under Node's 16 KiB of headers
const ENTITY_TAG_LIST_MAX_LENGTH = 4096

/** Request headers of `getPet`. */
export const GetPetHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    maxLength: ENTITY_TAG_LIST_MAX_LENGTH,
    description: `An \`ETag\` from an earlier answer (or a list of them, or \`*\`): when it still matches, the answer is 304 with no body. At most ${ENTITY_TAG_LIST_MAX_LENGTH} characters.`,
    examples: ['"3q2-7w"']
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
    maxLength: ENTITY_TAG_LIST_MAX_LENGTH,
    pattern: ENTITY_TAG_LIST_PATTERN,
    [PATTERN_DESCRIPTION_KEYWORD]: '* or a comma-separated list of quoted entity tags, such as "3q2-7w"',
    description: 'Makes the change conditional: the `ETag` of the pet as the client last saw it (from `updatePet` or `getPet`), ' +
      'a list of tags, or `*` (any current pet). When the pet\'s current tag is not among them (strong comparison: a `W/` tag never matches), ' +
      `the answer is 412 \`precondition_failed\` and nothing changes. At most ${ENTITY_TAG_LIST_MAX_LENGTH} characters.`,
    examples: ['"3q2-7w"']
  }))
})
