import { Type, type Static } from '@sinclair/typebox'
import { pagedListQuerySchema, PAGE_LIMIT_MAX, type PagedListSpec } from '../../infra/http/paged-list.js'
import { INT64_MAX, INT64_MIN, type Int64 } from '../../infra/json/int64.js'
import { int64Schema } from '../../infra/schemas/int64-schema.js'
import { PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import { INT64_IN_JAVASCRIPT, nameSchema, PET_STATUSES, type PetCounts } from '../pets/index.js'

/** Longest category name accepted, in characters (Unicode code points). */
export const CATEGORY_NAME_MAX_LENGTH = 100

/** A category's id: any int64, the `categoryId` its pets carry. */
export function categoryIdSchema (description: string) {
  return int64Schema({ description: `${description} Any int64, from −2^63 (${INT64_MIN}) to 2^63−1 (${INT64_MAX}), kept exactly. ${INT64_IN_JAVASCRIPT}`, examples: [1] })
}

// one that Spectral's check of examples, which reads the pattern without Unicode property classes, takes too
const CATEGORY_NAME_EXAMPLE = 'Hawk'

/** A category's name as a request gives it: the pets' rule for a name (visible text, no control characters). */
export const categoryNameSchema = Type.String({
  minLength: 1,
  maxLength: CATEGORY_NAME_MAX_LENGTH,
  pattern: nameSchema.pattern,
  [PATTERN_DESCRIPTION_KEYWORD]: nameSchema[PATTERN_DESCRIPTION_KEYWORD] as string,
  description: `The category's name as a storefront shows it: 1 to ${CATEGORY_NAME_MAX_LENGTH} characters (Unicode code points) with at least one visible character ` +
    'and no control characters, unpaired surrogates or bidirectional controls (the rule of a pet\'s name). No two categories have the same name (compared exactly).',
  examples: [CATEGORY_NAME_EXAMPLE]
})

/** The category the document's examples show. */
export const CATEGORY_EXAMPLE = { id: 1, name: CATEGORY_NAME_EXAMPLE, pets: { available: 12, pending: 3, sold: 40 } } as const

const countSchema = (status: string) => Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: `Pets of the category that are \`${status}\`.`, examples: [CATEGORY_EXAMPLE.pets.available] })

export const CategoryPetCountsSchema = Type.Object(
  Object.fromEntries(PET_STATUSES.map((status) => [status, countSchema(status)])) as Record<typeof PET_STATUSES[number], ReturnType<typeof countSchema>>, {
    $id: 'CategoryPetCounts',
    additionalProperties: false,
    examples: [CATEGORY_EXAMPLE.pets],
    description: 'The number of the category\'s pets in each status, exact at the moment of the read.'
  })

export const CategorySchema = Type.Object({
  id: categoryIdSchema('The category\'s id: the `categoryId` its pets carry.'),
  name: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    minLength: 1,
    maxLength: CATEGORY_NAME_MAX_LENGTH,
    description: 'The category\'s name, or `null` while pets carry its id but no name was given to it (`putCategory`).',
    examples: [CATEGORY_EXAMPLE.name]
  }),
  pets: Type.Ref(CategoryPetCountsSchema)
}, {
  $id: 'Category',
  additionalProperties: false,
  examples: [CATEGORY_EXAMPLE, { id: 7, name: null, pets: { available: 1, pending: 0, sold: 0 } }],
  description: 'A category: a `categoryId` pets carry, or one that was given a name, or both; with its pets counted by status.'
})
export interface Category { id: Int64, name: string | null, pets: PetCounts }

export const CategoriesSchema = Type.Array(Type.Ref(CategorySchema), {
  $id: 'Categories',
  maxItems: PAGE_LIMIT_MAX,
  examples: [[CATEGORY_EXAMPLE]],
  description: `Categories ordered by \`id\` ascending (int64 order, negative ids first), at most ${PAGE_LIMIT_MAX} (one page).`
})

export const CategoryNameSchema = Type.Object({ name: categoryNameSchema }, {
  $id: 'CategoryName',
  additionalProperties: false,
  examples: [{ name: CATEGORY_EXAMPLE.name }],
  description: 'What `putCategory` sets: the category\'s name. Types are strict; `id` and any other field are rejected with 400.'
})
export type CategoryName = Static<typeof CategoryNameSchema>

export const CategoryIdParamsSchema = Type.Object({
  categoryId: categoryIdSchema('The category\'s id, written in plain decimal digits with an optional `-` (a path segment is text: `1.0` or `1e0` are rejected).')
})

/** listCategories as a paged list, in id order: no filter; its cursors hold any int64 (afterInt64). */
export const CATEGORIES_LIST: PagedListSpec<never> = {
  path: '/categories',
  secretSetting: 'categories_cursor_secret',
  tag: 'v1',
  filters: {}
}

export const ListCategoriesQuerySchema = pagedListQuerySchema('categories', {})

/** The schemas of `/v1/categories`, in the order they become the document's components. */
export const CATEGORY_SCHEMAS = [CategoryPetCountsSchema, CategorySchema, CategoriesSchema, CategoryNameSchema] as const
