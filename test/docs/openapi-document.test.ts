import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { parse as parseYaml } from 'yaml'
import { DOCS_PREFIX } from '../../src/capabilities/docs/api-reference.js'
import { API_LICENSE } from '../../src/capabilities/docs/openapi.js'
import { ERROR_CODES, statusesOf, type ErrorCode } from '../../src/infra/errors/catalogue.js'
import { securityHeaders } from '../../src/infra/http/security.js'
import { DOCUMENT_MAX_LENGTH } from '../../src/capabilities/docs/openapi-document-routes.js'
import { IDEMPOTENCY_KEY_PATTERN } from '../../src/capabilities/idempotency/idempotency-header.js'
import { codesNamedIn } from '../../src/infra/schemas/responses.js'
import { buildTestApp } from '../helpers/build-app.js'

const ENV = { PUBLIC_BASE_URL: 'https://api.example.com/v1', STAGING_BASE_URL: 'https://staging.example.com/v1' }

interface MediaType { schema: unknown, example?: unknown, examples?: Record<string, { value: unknown }> }
interface Operation {
  operationId?: string
  deprecated?: boolean
  security?: unknown[]
  requestBody?: { content?: Record<string, MediaType> }
  responses: Record<string, { description?: string, headers?: Record<string, unknown>, content?: Record<string, MediaType> }>
  parameters?: Array<{ name: string, in: string, schema: Record<string, unknown>, example?: unknown }>
  [extension: `x-${string}`]: unknown
}
type Document = {
  openapi: string
  info: { version: string, description?: string, license?: unknown, contact?: unknown }
  servers: Array<{ url: string }>
  security: unknown[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, { properties?: Record<string, Record<string, unknown>> }>, securitySchemes: Record<string, unknown> }
}

async function fetchDocument (t: Parameters<typeof buildTestApp>[0]): Promise<{ document: Document, app: Awaited<ReturnType<typeof buildTestApp>>['app'] }> {
  const { app } = await buildTestApp(t, { env: ENV })
  const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
  assert.equal(res.statusCode, 200)
  return { document: res.json(), app }
}

function operation (document: Document, path: string, method: string): Operation {
  const found = document.paths[path]?.[method]
  assert.ok(found !== undefined, `${method.toUpperCase()} ${path} is in the document`)
  return found
}

describe('the served OpenAPI document', () => {
  test('When it is fetched without a key, then it is a valid OpenAPI 3.1 document', async (t) => {
    const { document } = await fetchDocument(t)

    assert.equal(document.openapi, '3.1.0')
    assert.equal(document.info.version, '1.0.0')
    await SwaggerParser.validate(structuredClone(document) as never)
  })

  test('When it is fetched as YAML, then YAML 1.2 and YAML 1.1 readers both load the same document as the JSON', async (t) => {
    const { document, app } = await fetchDocument(t)

    const res = await app.inject({ method: 'GET', url: '/v1/openapi.yaml' })

    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/yaml/)
    assert.deepEqual(parseYaml(res.body), document)
    // a YAML 1.1 reader (js-yaml, PyYAML) would load an unquoted 2030-12-05 as a timestamp
    assert.deepEqual(parseYaml(res.body, { schema: 'yaml-1.1' }), document)
    assert.match(res.body, /x-deprecated-sunset: "2030-12-05"/)
    assert.ok(res.body.length < DOCUMENT_MAX_LENGTH)
  })

  test('When info is read, then it names the license and a contact', async (t) => {
    const { document } = await fetchDocument(t)

    assert.deepEqual(document.info.license, API_LICENSE)
    assert.deepEqual(document.info.contact, { name: 'Pet Store API reference', url: 'https://api.example.com/docs' })
  })

  test('When examples are read, then every parameter, request body and response with content has one, and each error example carries its own status and a code of that status its description names', async (t) => {
    const { document } = await fetchDocument(t)

    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`
        for (const parameter of op.parameters ?? []) assert.ok(parameter.example !== undefined, `${where}: parameter ${parameter.name} has an example`)
        for (const media of Object.values(op.requestBody?.content ?? {})) assert.ok(media.example !== undefined, `${where}: the request body has an example`)
        for (const [status, response] of Object.entries(op.responses)) {
          for (const media of Object.values(response.content ?? {})) {
            assert.ok(media.example !== undefined || media.examples !== undefined, `${where} ${status} has an example`)
            if (Number(status) < 400) continue
            const examples = Object.values(media.examples ?? {}).map((example) => example.value as { code: ErrorCode, status: number })
            assert.ok(examples.length > 0, `${where} ${status}: one example per code`)
            for (const example of examples) {
              assert.equal(example.status, Number(status), `${where} ${status}: ${example.code}`)
              assert.ok(statusesOf(example.code).includes(Number(status)), `${where} ${status}: ${example.code} is a ${status} code`)
            }
            assert.deepEqual(examples.map((example) => example.code), codesNamedIn(response.description ?? ''), `${where} ${status}: an example for each code the description names`)
          }
        }
      }
    }
  })

  test('When the 401 and 429 answers are read, then they document the failed-auth policy\'s RateLimit fields, even with per-key limiting off', async (t) => {
    const { app } = await buildTestApp(t, { env: { ...ENV, RATE_LIMIT_MAX: '0' } })
    const document: Document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()

    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (op.security !== undefined) continue
        for (const status of ['401', '429']) {
          assert.deepEqual(Object.keys(op.responses[status]?.headers ?? {}).filter((name) => name.startsWith('RateLimit')).sort(), ['RateLimit', 'RateLimit-Policy'], `${method} ${path} ${status}`)
        }
        assert.equal(op.responses['200']?.headers?.RateLimit, undefined, `${method} ${path}: no per-key fields when that limit is off`)
      }
    }
  })

  test('When the document\'s prose lists the headers on every answer, then they are the ones every answer carries', async (t) => {
    const { document, app } = await fetchDocument(t)

    const res = await app.inject({ method: 'GET', url: '/healthz' })

    for (const [name, value] of Object.entries(securityHeaders())) {
      assert.ok(String(document.info.description).includes(`\`${name}: ${value}\``), `the prose names ${name}`)
      if (name !== 'cache-control') assert.equal(res.headers[name], value)
    }
  })

  test('When the deployments are configured, then both are servers and bearer auth applies globally', async (t) => {
    const { document } = await fetchDocument(t)

    assert.deepEqual(document.servers.map((server) => server.url), [ENV.PUBLIC_BASE_URL, ENV.STAGING_BASE_URL])
    assert.deepEqual(document.security, [{ bearerAuth: [] }])
    assert.deepEqual(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: 'An API key issued by the operator (`npx petstore keys create --name … [--role read|write|admin]`); its role says which operations it may call (the API\'s description has the table).' })
  })

  test('When the operations are read, then ids, deprecation and vendor extensions are as the spec says', async (t) => {
    const { document } = await fetchDocument(t)

    assert.equal(operation(document, '/pets', 'get').operationId, 'listPets')
    assert.equal(operation(document, '/pets', 'post').operationId, 'createPet')
    const getPet = operation(document, '/pets/{petId}', 'get')
    assert.equal(getPet.operationId, 'getPet')
    assert.equal(getPet.deprecated, true)
    assert.equal(getPet['x-deprecated-sunset'], '2030-12-05')
    for (const [path, method, operationId] of [['/store/orders', 'post', 'placeOrder'], ['/store/orders', 'get', 'listOrders'], ['/store/orders/{orderId}', 'get', 'getOrder'],
      ['/store/orders/{orderId}', 'patch', 'updateOrder'], ['/store/inventory', 'get', 'getInventory']] as const) {
      const order = operation(document, path, method)
      assert.equal(order.operationId, operationId)
      assert.equal(order['x-stability'], 'beta', operationId)
    }
  })

  test('When responses are read, then every error is an Error and the headers are documented', async (t) => {
    const { document } = await fetchDocument(t)

    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          // a HEAD answer has no body
          if (method === 'head') assert.equal(response.content, undefined, `${method} ${path} ${status}`)
          else if (Number(status) >= 400) assert.deepEqual(response.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${method} ${path} ${status}`)
        }
        if (op.security === undefined) assert.ok(op.responses['401']?.headers?.['WWW-Authenticate'] !== undefined, `${method} ${path} documents 401 with WWW-Authenticate`)
      }
    }
    assert.ok(operation(document, '/pets', 'post').responses['201']?.headers?.Location !== undefined)
    assert.ok(operation(document, '/pets', 'get').responses['200']?.headers?.Link !== undefined)
    for (const response of Object.values(operation(document, '/pets/{petId}', 'get').responses)) {
      assert.deepEqual(Object.keys(response.headers ?? {}).filter((h) => ['Deprecation', 'Sunset', 'Link'].includes(h)).sort(), ['Deprecation', 'Link', 'Sunset'])
    }
  })

  test('When updatePet is read, then it is beta and not deprecated, takes a merge patch, and documents each answer it gives with an example', async (t) => {
    const { document } = await fetchDocument(t)

    const updatePet = operation(document, '/pets/{petId}', 'patch')
    assert.equal(updatePet.operationId, 'updatePet')
    assert.equal(updatePet['x-stability'], 'beta')
    assert.equal(updatePet.deprecated, undefined)
    assert.equal(updatePet.security, undefined, 'bearer auth like every operation')
    assert.deepEqual(Object.keys(updatePet.requestBody?.content ?? {}), ['application/merge-patch+json', 'application/json'])
    assert.deepEqual(updatePet.requestBody?.content?.['application/merge-patch+json']?.schema, { $ref: '#/components/schemas/PetPatch' })
    assert.deepEqual(Object.keys(updatePet.responses).sort(), ['200', '400', '401', '403', '404', '409', '412', '413', '415', '429', '500', '503'])
    for (const [status, response] of Object.entries(updatePet.responses)) {
      const media = response.content?.['application/json']
      assert.ok(media?.example !== undefined || media?.examples !== undefined, `${status} has an example`)
      assert.deepEqual(Object.keys(response.headers ?? {}).filter((h) => ['Deprecation', 'Sunset', 'Link'].includes(h)), [], `${status} is not marked deprecated`)
    }
    assert.ok(updatePet.responses['200']?.headers?.ETag !== undefined)
    assert.ok(updatePet.responses['429']?.headers?.['Retry-After'] !== undefined)
    assert.ok(updatePet.responses['200']?.headers?.RateLimit !== undefined)
    assert.deepEqual((updatePet.responses['409']?.content?.['application/json']?.examples?.invalid_transition?.value as { code?: string }).code, 'invalid_transition')
    assert.deepEqual((updatePet.responses['412']?.content?.['application/json']?.examples?.precondition_failed?.value as { code?: string }).code, 'precondition_failed')
    const patch = document.components.schemas.PetPatch as { properties?: Record<string, unknown>, required?: unknown, additionalProperties?: unknown }
    assert.deepEqual(Object.keys(patch.properties ?? {}), ['name', 'categoryId', 'status'])
    assert.equal(patch.required, undefined)
    assert.equal(patch.additionalProperties, false)
  })

  test('When an answer has an example, then it is valid against the answer\'s schema, and an Error example\'s status and code are the answer\'s', async (t) => {
    const { document } = await fetchDocument(t)
    const ajv = new Ajv2020({ strict: false, validateSchema: false })
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) })
    ajv.addSchema({ ...document, $id: 'doc' })

    let examples = 0
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        assert.equal(op['x-response-examples'], undefined, `${method} ${path}: the examples were placed on its responses`)
        for (const [status, response] of Object.entries(op.responses)) {
          for (const [mediaType, media] of Object.entries(response.content ?? {})) {
            const values = media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((named) => named.value)
            for (const example of values) {
              examples++
              const pointer = ['paths', path, method, 'responses', status, 'content', mediaType, 'schema'].map((token) => encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')
              const validate = ajv.compile({ $ref: `doc#/${pointer}` })
              assert.ok(validate(example), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`)
              if (Number(status) >= 400) {
                const { code, status: bodyStatus } = example as { code: ErrorCode, status: number }
                assert.equal(bodyStatus, Number(status), `${method} ${path} ${status}`)
                assert.ok(statusesOf(code).includes(Number(status)), `${method} ${path} ${status}: ${code}`)
              }
            }
          }
        }
      }
    }
    assert.ok(examples >= 11)
  })

  test('When the schemas are read, then limits and the error codes are schema keywords', async (t) => {
    const { document } = await fetchDocument(t)

    const limit = operation(document, '/pets', 'get').parameters?.find((p) => p.name === 'limit')
    assert.deepEqual([limit?.schema.minimum, limit?.schema.maximum, limit?.schema.default], [1, 100, 20])
    assert.equal((document.components.schemas.Pets as { maxItems?: number }).maxItems, 100)
    const idempotencyKey = operation(document, '/pets', 'post').parameters?.find((p) => p.name === 'idempotency-key')
    assert.deepEqual([idempotencyKey?.schema.minLength, idempotencyKey?.schema.maxLength, idempotencyKey?.schema.pattern], [1, 257, IDEMPOTENCY_KEY_PATTERN])
    assert.equal(document.components.schemas.NewPet?.properties?.name?.pattern,
      '^[^\\p{Cc}\\p{Cs}\\p{Bidi_Control}]*[^\\p{Cc}\\p{Cs}\\p{Bidi_Control}\\p{White_Space}\\p{Default_Ignorable_Code_Point}][^\\p{Cc}\\p{Cs}\\p{Bidi_Control}]*$')
    const newPet = document.components.schemas.NewPet?.properties
    assert.equal(newPet?.name?.maxLength, 100)
    // the default in words and as x-default, never as `default`, which generators read as "always present"
    assert.equal(newPet?.status?.default, undefined)
    assert.equal(newPet?.status?.['x-default'], 'available')
    const required = (name: string): unknown => (document.components.schemas[name] as { required?: unknown } | undefined)?.required
    assert.deepEqual([required('NewPet'), required('Pet')], [['name', 'categoryId'], ['id', 'name', 'categoryId', 'status']])
    // int64's bounds, exactly (a JSON.parse of the document rounds them; see test/routes/pets-int64.test.ts for the text)
    assert.deepEqual([newPet?.categoryId?.minimum, newPet?.categoryId?.maximum], [-(2 ** 63), 2 ** 63])
    assert.deepEqual(document.components.schemas.Error?.properties?.code?.enum, ERROR_CODES)
  })

  test('When the feed\'s type filter is read, then it is a list of the event types, written as the parameter repeated', async (t) => {
    const { document, app } = await fetchDocument(t)

    const type = operation(document, '/events', 'get').parameters?.find((p) => p.name === 'type') as Record<string, unknown> & { schema: Record<string, unknown> }
    assert.deepEqual([type.style, type.explode], ['form', true])
    assert.deepEqual(type.schema.items, { type: 'string', enum: [...app.eventTypes.types] })
    assert.deepEqual(app.eventTypes.types, ['pet.created', 'pet.updated', 'order.created', 'order.updated', 'category.updated'], 'the producers\' types, in registration order')
    assert.deepEqual([type.schema.style, type.schema.explode], [undefined, undefined], 'on the parameter, not in its schema')
  })

  test('When the app lists its routes, then every one it serves but the /docs page is in the document, HEAD included', async (t) => {
    const { document, app } = await fetchDocument(t)
    const documented = new Set<string>()
    for (const [path, item] of Object.entries(document.paths)) {
      const fullPath = path === '/healthz' || path === '/readyz' ? path : `/v1${path}`
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${fullPath.replace(/\{(\w+)\}/g, ':$1')}`)
    }

    // the reference page shows the API; it is no part of it
    const isDocsPage = (url: string): boolean => url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`)
    const served = app.registeredRoutes.filter((route) => !route.methodNotAllowed && !route.notFound && !isDocsPage(route.url))

    assert.ok(served.length >= 15)
    assert.ok(served.some((route) => route.method === 'HEAD'))
    for (const route of served) assert.ok(documented.has(`${route.method} ${route.url}`), `${route.method} ${route.url} is documented`)
  })
})
