import { Type, type SchemaOptions, type Static, type TUnsafe } from '@sinclair/typebox'
import { INT64_MAX, INT64_MIN, type Int64 } from '../../infra/json/int64.js'
import { int64Schema } from '../../infra/schemas/int64-schema.js'
import { DEFAULT_VALUE_KEYWORD, PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../../infra/http/paged-list.js'

/** Longest pet name accepted, in characters (Unicode code points). */
export const PET_NAME_MAX_LENGTH = 100

/** Largest integer a JavaScript number holds exactly (2^53 − 1); event ids stay within it. */
export const MAX_EXACT_INTEGER = Number.MAX_SAFE_INTEGER

/**
 * What the document tells a JavaScript client about int64 values: they are JSON numbers, which
 * `JSON.parse` rounds beyond ±(2^53−1).
 */
export const INT64_IN_JAVASCRIPT = `Values beyond ±(2^53−1) (${MAX_EXACT_INTEGER}) arrive and must be sent as JSON numbers written digit for digit, ` +
  'never as strings: in JavaScript, `JSON.parse` and `JSON.stringify` would round them (or throw on a `bigint`), so read answers with a JSON parser ' +
  'that keeps big integers (as `bigint`), or use `@petstore/client`, which does.'

export const PET_STATUSES = ['available', 'pending', 'sold'] as const
export type PetStatus = typeof PET_STATUSES[number]

/**
 * A PetStatus schema as a plain string enum. Places that need their own default or
 * description use a copy, because siblings of a `$ref` are dropped from OpenAPI.
 */
export function petStatusSchema (options: SchemaOptions = {}): TUnsafe<PetStatus> {
  return Type.Unsafe<PetStatus>({ type: 'string', enum: [...PET_STATUSES], ...options })
}

export const PetStatusSchema = petStatusSchema({
  $id: 'PetStatus',
  description: 'Availability of the animal: `available`, `pending` or `sold`.'
})

/** The status a new pet gets when the request does not say. */
export const DEFAULT_PET_STATUS: PetStatus = 'available'

// never in a name: control characters, unpaired surrogates, and bidirectional controls (which can
// make a name display as something else, e.g. reversed, in a storefront)
const NOT_IN_A_NAME = '\\p{Cc}\\p{Cs}\\p{Bidi_Control}'
// blank: a space of any kind (NBSP, …) or a character that displays as nothing (U+200B, U+FEFF, U+2060, …)
const BLANK = '\\p{White_Space}\\p{Default_Ignorable_Code_Point}'

/** A pet's name, as every schema that carries one states it. */
export const nameSchema = Type.String({
  minLength: 1,
  maxLength: PET_NAME_MAX_LENGTH,
  pattern: `^[^${NOT_IN_A_NAME}]*[^${NOT_IN_A_NAME}${BLANK}][^${NOT_IN_A_NAME}]*$`,
  [PATTERN_DESCRIPTION_KEYWORD]: 'text with at least one visible character (not Unicode White_Space or Default_Ignorable_Code_Point) ' +
    'and no control characters (Cc), unpaired surrogates (Cs) or bidirectional controls (Bidi_Control)',
  description: `The animal's name: 1 to ${PET_NAME_MAX_LENGTH} characters (Unicode code points) with at least one visible character, ` +
    'so not only characters that are Unicode White_Space (spaces, NBSP, …) or Default_Ignorable_Code_Point (U+200B, U+FEFF, U+2060, …); ' +
    'no control characters (Cc), unpaired surrogates (Cs) or bidirectional controls (Bidi_Control: U+061C, U+200E–200F, U+202A–202E, U+2066–2069).',
  examples: ['Rex']
})

/** A pet's category id, as every schema that carries one states it: any int64. */
export const categoryIdSchema = int64Schema({
  description: `Identifier of the category the animal belongs to: any int64, from −2^63 (${INT64_MIN}) to 2^63−1 (${INT64_MAX}), kept exactly. ` +
    'Must be an integer (a JSON number without a fractional part, so `1.0` and `1e2` count; never a string); values beyond int64 and fractions ' +
    `are rejected, never rounded. ${INT64_IN_JAVASCRIPT}`,
  examples: [1]
})

/** The pet the document's examples show. */
export const PET_EXAMPLE = { id: 1, name: 'Rex', categoryId: 1, status: DEFAULT_PET_STATUS } as const

export const NewPetSchema = Type.Object({
  name: nameSchema,
  categoryId: categoryIdSchema,
  // the default in words and as x-default, not as `default`: generators would make the field required
  status: Type.Optional(petStatusSchema({
    [DEFAULT_VALUE_KEYWORD]: DEFAULT_PET_STATUS,
    description: `Availability of the animal. Optional: when omitted, the pet is created \`${DEFAULT_PET_STATUS}\` ` +
      '(a new animal in a store is for sale), and every answer carries the status it got.'
  }))
}, {
  $id: 'NewPet',
  additionalProperties: false,
  examples: [{ name: PET_EXAMPLE.name, categoryId: PET_EXAMPLE.categoryId }],
  description: 'A pet to add. Types are strict (no coercion); `id` and any field not listed are rejected with 400.'
})
export type NewPet = Static<typeof NewPetSchema>

/** A pet's id as a request names it (the path's `petId`): any positive int64. */
export function petIdSchema (options: { description: string, examples?: number[] }): TUnsafe<Int64> {
  return int64Schema({ minimum: 1n, ...options })
}

/**
 * A pet's id as the service assigns it: a positive int64 in the document, and a `number` in this code,
 * because ids are assigned counting up from 1 and never reach 2^53 (PostgreSQL's identity stops at
 * 2^53 − 1; SQLite's AUTOINCREMENT would need 2^53 inserts first).
 */
const assignedPetIdSchema = (options: { description: string, examples?: number[] }): TUnsafe<number> =>
  Type.Unsafe<number>(petIdSchema(options))

export const PetSchema = Type.Object({
  id: assignedPetIdSchema({ description: `Unique identifier, assigned by the service on creation: a positive int64. ${INT64_IN_JAVASCRIPT}`, examples: [1] }),
  name: nameSchema,
  categoryId: categoryIdSchema,
  status: Type.Ref(PetStatusSchema)
}, {
  $id: 'Pet',
  additionalProperties: false,
  examples: [PET_EXAMPLE],
  description: 'An animal as the service returns it. `status` is always present.'
})
export type Pet = Static<typeof PetSchema>

/**
 * A JSON Merge Patch (RFC 7396) of a pet: the fields to change, each with createPet's rules. `null`
 * (which would remove a field), `id` and unknown fields are refused; `{}` changes nothing.
 */
export const PetPatchSchema = Type.Object({
  name: Type.Optional(nameSchema),
  categoryId: Type.Optional(categoryIdSchema),
  status: Type.Optional(petStatusSchema({
    description: 'The new availability. Only some transitions are allowed (see `updatePet`); setting the status the pet already has changes nothing.'
  }))
}, {
  $id: 'PetPatch',
  additionalProperties: false,
  description: 'The fields of a pet to change (a JSON Merge Patch, RFC 7396); fields left out keep their value. ' +
    'Types are strict, as for `NewPet`; `null` for a field (every field of a pet is required), `id` and any field not listed are rejected with 400. ' +
    '`{}` changes nothing.',
  examples: [{ status: 'pending' }]
})
export type PetPatch = Static<typeof PetPatchSchema>
// every list's page sizes (infra/http/paged-list.ts), pets' among them
export { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX }

export const PetsSchema = Type.Array(Type.Ref(PetSchema), {
  $id: 'Pets',
  maxItems: PAGE_LIMIT_MAX,
  examples: [[PET_EXAMPLE]],
  description: `Pets ordered by \`id\` ascending, at most ${PAGE_LIMIT_MAX} (one page).`
})
