import { Type } from '@sinclair/typebox'
import { PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import { idempotencyKeyHeaderSchema } from '../idempotency/index.js'

/** Request headers of `createPet` (names in lower case: Node hands them to validation so). */
export const CreatePetHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(idempotencyKeyHeaderSchema('pet'))
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
