import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { ACCEPT_ENCODING_HEADER } from '../../infra/http/content-types.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { nextLinkHeader, pagedListBadRequest, PAGE_LIMIT_DEFAULT } from '../../infra/http/paged-list.js'
import { answerConditionalGet, ifNoneMatchHeaderSchema, sendTagged, serializeAnswer } from '../../infra/http/tagged-answers.js'
import type { Int64 } from '../../infra/json/int64.js'
import { commonErrorResponses, errorResponse } from '../../infra/schemas/responses.js'
import { firstIdAfter, readCategory, readCategoryPage, withPets } from './category-pages.js'
import { CATEGORIES_LIST, CATEGORY_EXAMPLE, CATEGORY_NAME_MAX_LENGTH, CategoryIdParamsSchema, CategoryNameSchema, CategorySchema, CategoriesSchema, ListCategoriesQuerySchema } from './category-schemas.js'
import { CATEGORY_ETAG_HEADER, CATEGORY_TAGGING } from './category-tags.js'

const notFoundMessage = (id: Int64): string => `No category has id ${id}: no name was given to it and no pet carries it.`
const nameTakenMessage = (name: string, holder: Int64): string => `${JSON.stringify(name)} is the name of category ${holder} already; category names are unique.`

const NOT_FOUND = errorResponse('No category has this id: it has no name and no pet carries it (`category_not_found`).', undefined,
  { category_not_found: notFoundMessage(CATEGORY_EXAMPLE.id) })
const BAD_ID = errorResponse('`categoryId` is not an int64 in plain decimal digits, or a query parameter was sent (`invalid_request`).', undefined,
  { invalid_request: 'path parameter "categoryId" must be an integer' })

/**
 * `/categories` (beta): the categories pets carry and the names given to them. A category is a `categoryId` at least
 * one pet carries, or one named by `putCategory`, or both; its pets are counted by pets (`app.petCategoryCounts`).
 */
const categoriesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const list = app.categoryList
  const store = app.categoryStore
  const pets = app.petCategoryCounts

  app.get('/categories', {
    schema: {
      operationId: 'listCategories',
      tags: ['categories'],
      summary: 'List categories (beta)',
      description: 'Returns at most `limit` categories in `id` order (int64 order: negative ids first): every `categoryId` a pet carries and every category ' +
        'given a name, each with its pets counted by status (`name` is `null` for a category no name was given to). ' +
        'When more exist, a `Link: <…>; rel="next"` header points at the next page.',
      'x-stability': 'beta',
      querystring: ListCategoriesQuerySchema,
      response: {
        200: { ...Type.Ref(CategoriesSchema), description: 'A page of categories (a bare array).', headers: { Link: nextLinkHeader(CATEGORIES_LIST.path, 'categories') } },
        400: pagedListBadRequest([]),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { limit = PAGE_LIMIT_DEFAULT, cursor } = request.query
    const from = firstIdAfter(list.afterInt64(cursor, {}))
    if (from === undefined) return []
    const { categories, hasMore } = await readCategoryPage(store, pets, from, limit)
    const last = categories.at(-1)
    if (hasMore && last !== undefined) reply.header('link', list.nextLink(baseUrlFor(app.config, request.host), limit, {}, last.id))
    return categories
  })

  app.get('/categories/:categoryId', {
    schema: {
      operationId: 'getCategory',
      tags: ['categories'],
      summary: 'Get a category (beta)',
      description: 'Returns the category with its name (`null` when pets carry its id but no name was given to it) and its pets counted by status, with its `ETag`; ' +
        'with `If-None-Match` holding that tag, 304 while neither its name nor its pets changed.',
      'x-stability': 'beta',
      params: CategoryIdParamsSchema,
      headers: Type.Object({ 'if-none-match': Type.Optional(ifNoneMatchHeaderSchema()) }),
      response: {
        200: { ...Type.Ref(CategorySchema), description: 'The category.', headers: { ETag: CATEGORY_ETAG_HEADER } },
        304: { type: 'null', description: 'The category still matches the `If-None-Match` tag; no body.', headers: { ETag: { ...CATEGORY_ETAG_HEADER, description: 'The matching entity tag.' } } },
        400: BAD_ID,
        404: NOT_FOUND,
        ...commonErrorResponses()
      }
    },
    onSend: (request, reply, payload, done) => { done(null, answerConditionalGet(request, reply, payload, undefined, CATEGORY_TAGGING)) }
  }, async (request) => {
    const { categoryId } = request.params
    const category = await readCategory(store, pets, categoryId)
    if (category === undefined) throw new ApiError('category_not_found', notFoundMessage(categoryId))
    return category
  })

  app.put('/categories/:categoryId', {
    schema: {
      operationId: 'putCategory',
      tags: ['categories'],
      summary: 'Name a category (beta)',
      description: `Gives the category the \`name\` (1 to ${CATEGORY_NAME_MAX_LENGTH} characters, unique among categories), whether or not pets carry its id yet, ` +
        'and answers the category with its pets and its `ETag`: 201 when it had no name, 200 when it had one (replaced, or the same: then nothing changes). ' +
        'Each change records a `category.updated` event in the same transaction. A pet may carry a `categoryId` that was never named: `createPet` accepts any.',
      'x-stability': 'beta',
      params: CategoryIdParamsSchema,
      body: Type.Ref(CategoryNameSchema),
      response: {
        200: { ...Type.Ref(CategorySchema), description: 'The category had a name: it has this one now (or had it already).', headers: { ETag: CATEGORY_ETAG_HEADER } },
        201: { ...Type.Ref(CategorySchema), description: 'The category had no name: it has this one now.', headers: { ETag: CATEGORY_ETAG_HEADER } },
        400: errorResponse('`categoryId` is not an int64, the body has no `name`, a `name` that is not 1 to 100 characters of visible text, or an unknown field ' +
          '(`invalid_request`: the message names the field); or the body is not JSON (`malformed_json`).', undefined,
        { invalid_request: 'body: field "name" must NOT have more than 100 characters' }),
        409: errorResponse('Another category has this name already (`category_name_taken`). Nothing changed.', undefined,
          { category_name_taken: nameTakenMessage(CATEGORY_EXAMPLE.name, CATEGORY_EXAMPLE.id + 1) }),
        413: errorResponse('The body is larger than the limit (`payload_too_large`).'),
        415: errorResponse('The body is not `application/json` in UTF-8, or it has a `Content-Encoding` (`unsupported_media_type`).', { 'Accept-Encoding': ACCEPT_ENCODING_HEADER }),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { categoryId } = request.params
    const { name } = request.body
    const put = await store.putCategory(categoryId, name)
    if (put.outcome === 'name_taken') throw new ApiError('category_name_taken', nameTakenMessage(name, put.holder.id))
    reply.code(put.outcome === 'created' ? 201 : 200)
    return sendTagged(reply, serializeAnswer(reply, await withPets(pets, put.category), 'Category'), CATEGORY_TAGGING)
  })

  allowOnly(app, '/categories', ['GET'])
  allowOnly(app, '/categories/:categoryId', ['GET', 'PUT'])
}

export default categoriesRoutes
