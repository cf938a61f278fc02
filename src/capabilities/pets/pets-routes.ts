import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AuthenticatedKey } from '../keys/index.js'
import type { CounterSeries } from '../../infra/metrics/tally.js'
import { baseUrlFor } from '../../infra/http/base-url.js'
import { ApiError } from '../../infra/errors/catalogue.js'
import { answerConditionalGet } from '../../infra/http/tagged-answers.js'
import { PageCache, type CachedPage } from './page-cache.js'
import { petFingerprint } from './pet-fingerprint.js'
import { CreatePetHeadersSchema, GetPetHeadersSchema } from './pet-headers.js'
import { DEFAULT_PET_STATUS, NewPetSchema, PAGE_LIMIT_DEFAULT, PetSchema, PetsSchema } from './pet-schemas.js'
import { ListPetsQuerySchema, PETS_LIST, PetIdParamsSchema } from './list-query.js'
import { nextLinkHeader, pagedListBadRequest } from '../../infra/http/paged-list.js'
import { ACCEPT_ENCODING_HEADER } from '../../infra/http/content-types.js'
import { commonErrorResponses, errorResponse, ETAG_HEADER, RETRY_AFTER_HEADER, type HeaderSpec } from '../../infra/schemas/responses.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { DEPRECATION_HEADER_SPECS, GET_PET_HEADERS, GET_PET_SUNSET_AT, GET_PET_SUNSET_DATE } from './get-pet-deprecation.js'
import updatePet, { petNotFoundMessage } from './update-pet-route.js'

// a client may keep a pet but must revalidate it (its ETag makes that cheap)
const GET_PET_CACHE_CONTROL = 'private, no-cache'
const GET_PET_TAGGED_HEADERS = Object.freeze({ 'cache-control': GET_PET_CACHE_CONTROL })
const GET_PET_CACHE_CONTROL_HEADER: HeaderSpec = {
  type: 'string',
  description: `\`${GET_PET_CACHE_CONTROL}\`: a client may keep the answer but must revalidate it.`,
  enum: [GET_PET_CACHE_CONTROL],
  example: GET_PET_CACHE_CONTROL
}

/** Sends a list page already serialized (by the route's own response serializer). */
function sendPage (reply: FastifyReply, page: CachedPage): FastifyReply {
  if (page.link !== undefined) reply.header('link', page.link)
  return reply.type('application/json; charset=utf-8').send(page.body)
}

const petsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // hot pages, reused while the store's list version holds (docs/performance.md)
  const pages = new PageCache(app.clock)

  // the request's host matters only when a staging address is configured
  const baseUrlOf = (request: FastifyRequest): string => app.config.stagingBaseUrl === undefined ? app.config.publicBaseUrl : baseUrlFor(app.config, request.host)
  // getPet's headers, made once per base address (there are one or two)
  const headersByBaseUrl = new Map<string, Readonly<Record<string, string>>>()
  const deprecationHeaders = (baseUrl: string): Readonly<Record<string, string>> => {
    let headers = headersByBaseUrl.get(baseUrl)
    if (headers === undefined) {
      headers = Object.freeze({ ...GET_PET_HEADERS, link: `<${baseUrl}/pets>; rel="successor-version"` })
      headersByBaseUrl.set(baseUrl, headers)
    }
    return headers
  }
  // the deprecated-calls series of each key, kept
  const deprecatedCalls = new Map<string, CounterSeries>()
  const deprecatedCallsOf = (key: AuthenticatedKey): CounterSeries => {
    const id = `${key.scope} ${key.role} ${key.name}`
    let series = deprecatedCalls.get(id)
    if (series === undefined) {
      series = app.petMetrics.deprecatedCalls.series({ operation: 'getPet', api_key: key.name, role: key.role })
      deprecatedCalls.set(id, series)
    }
    return series
  }

  app.get('/pets', {
    schema: {
      operationId: 'listPets',
      tags: ['pets'],
      summary: 'List animals',
      description: 'Returns at most `limit` pets in `id` order, optionally only those with `status`. ' +
        'When more match, a `Link: <…>; rel="next"` header points at the next page.',
      querystring: ListPetsQuerySchema,
      response: {
        200: { ...Type.Ref(PetsSchema), description: 'A page of pets (a bare array).', headers: { Link: nextLinkHeader(PETS_LIST.path, 'pets') } },
        400: pagedListBadRequest(['status']),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { limit = PAGE_LIMIT_DEFAULT, status, cursor } = request.query
    const baseUrl = baseUrlOf(request)
    // the raw cursor is part of the key: a cached page's cursor was checked when the page was read
    const key = `${baseUrl} ${status ?? ''} ${limit} ${cursor ?? ''}`
    const version = app.petStore.listVersion()
    const cached = pages.get(key, version)
    if (cached !== undefined) return sendPage(reply, cached)
    return sendPage(reply, await pages.load(key, version, async () => {
      const filters = { status }
      const page = await app.petStore.listPets({ status, afterId: app.petList.after(cursor, filters), limit })
      const last = page.pets.at(-1)
      const link = page.hasMore && last !== undefined ? app.petList.nextLink(baseUrl, limit, filters, last.id) : undefined
      return { body: reply.serialize(page.pets), link }
    }))
  })

  app.post('/pets', {
    schema: {
      operationId: 'createPet',
      tags: ['pets'],
      summary: 'Add an animal',
      description: 'Adds a pet and returns it with its new `id`. The write is durable before 201 is sent.',
      headers: CreatePetHeadersSchema,
      body: Type.Ref(NewPetSchema),
      response: {
        201: {
          ...Type.Ref(PetSchema),
          description: 'Animal added (or, for a repeated `Idempotency-Key`, the answer the first request got).',
          headers: {
            Location: { type: 'string', description: 'Path of the new pet: `/v1/pets/{id}`.', pattern: '^/v1/pets/[1-9][0-9]{0,18}$', maxLength: 28, example: '/v1/pets/1' },
            'Idempotent-Replayed': { type: 'string', description: '`true` when this answer is a replay of an earlier request with the same `Idempotency-Key`; nothing new was created.', enum: ['true'], example: 'true' }
          }
        },
        400: errorResponse('The body is missing required fields, has invalid values, unknown fields or an `id`, the `Idempotency-Key` header is malformed, ' +
          'a query parameter was sent (`invalid_request`), or the body is not JSON (`malformed_json`).', undefined, {
          invalid_request: 'body: field "categoryId" is required',
          malformed_json: 'The request body is not valid JSON: Unexpected end of JSON input'
        }),
        409: errorResponse('A request with the same `Idempotency-Key` is still being processed (`idempotency_request_in_progress`); retry after `Retry-After` seconds.', { 'Retry-After': RETRY_AFTER_HEADER }),
        413: errorResponse('The body is larger than the limit (`payload_too_large`).'),
        415: errorResponse('The body is not `application/json` in UTF-8, or it has a `Content-Encoding` (`unsupported_media_type`).', { 'Accept-Encoding': ACCEPT_ENCODING_HEADER }),
        422: errorResponse('The `Idempotency-Key` was already used with a different body (`idempotency_key_reused`).'),
        ...commonErrorResponses()
      }
    }
  }, async (request, reply) => {
    const { name, categoryId, status } = request.body
    const newPet = { name, categoryId, status: status ?? DEFAULT_PET_STATUS }
    const pet = await app.idempotentCreates.createOnce(request, reply, () => petFingerprint(newPet),
      async (completing) => await app.petStore.createPet(newPet, completing))
    return reply.header('location', `/v1/pets/${pet.id}`).send(pet)
  })

  app.get('/pets/:petId', {
    schema: {
      operationId: 'getPet',
      tags: ['pets'],
      summary: 'Get an animal (deprecated)',
      description: `Deprecated: removed on ${GET_PET_SUNSET_DATE}, after which it answers 410. ` +
        'Use `GET /pets` with the `status` filter instead. Every answer carries `Deprecation`, `Sunset` and a `successor-version` link.',
      deprecated: true,
      'x-deprecated-sunset': GET_PET_SUNSET_DATE,
      params: PetIdParamsSchema,
      headers: GetPetHeadersSchema,
      response: {
        200: {
          ...Type.Ref(PetSchema),
          description: 'The requested animal.',
          headers: {
            ...DEPRECATION_HEADER_SPECS,
            ETag: ETAG_HEADER,
            'Cache-Control': GET_PET_CACHE_CONTROL_HEADER
          }
        },
        304: {
          type: 'null',
          description: 'The pet still matches the `If-None-Match` tag; no body.',
          headers: { ...DEPRECATION_HEADER_SPECS, ETag: { ...ETAG_HEADER, description: 'The matching entity tag.' }, 'Cache-Control': GET_PET_CACHE_CONTROL_HEADER }
        },
        400: errorResponse('`petId` is not a positive integer, or a query parameter was sent (`invalid_request`).', DEPRECATION_HEADER_SPECS,
          { invalid_request: 'path parameter "petId" must be >= 1' }),
        404: errorResponse('No pet has this id (`pet_not_found`).', DEPRECATION_HEADER_SPECS, { pet_not_found: 'No pet has id 1.' }),
        410: errorResponse('The sunset date has passed; the operation is removed (`gone`).', DEPRECATION_HEADER_SPECS),
        ...commonErrorResponses(DEPRECATION_HEADER_SPECS)
      }
    },
    // onSend also runs for answers that end early (401, 400, 410), so every answer is marked
    onSend: (request, reply, payload, done) => {
      reply.headers(deprecationHeaders(baseUrlOf(request)))
      if (request.apiKey !== null) deprecatedCallsOf(request.apiKey).inc()
      // a tag of the bytes: it changes whenever updatePet changes the pet (updatePet answers the same tag)
      done(null, answerConditionalGet(request, reply, payload, GET_PET_TAGGED_HEADERS))
    },
    // before validation: once removed, the operation is gone whatever the id looks like
    preValidation: (_request, _reply, done) => {
      done(app.clock.now() >= GET_PET_SUNSET_AT.getTime()
        ? new ApiError('gone', `GET /v1/pets/{petId} was removed on ${GET_PET_SUNSET_AT.toUTCString()}; use GET /v1/pets with the status filter`)
        : undefined)
    }
  }, async (request) => {
    const pet = await app.petStore.findPetById(request.params.petId)
    if (pet === undefined) throw new ApiError('pet_not_found', petNotFoundMessage(request.params.petId))
    return pet
  })

  await app.register(updatePet)

  allowOnly(app, '/pets', ['GET', 'POST'])
  allowOnly(app, '/pets/:petId', ['GET', 'PATCH'])
}

export default petsRoutes
