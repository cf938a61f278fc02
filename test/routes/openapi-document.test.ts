import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import SwaggerParser from '@apidevtools/swagger-parser'
import { parse as parseYaml } from 'yaml'
import { DOCS_PREFIX } from '../../src/docs/api-reference.js'
import { ERROR_CODES } from '../../src/errors/catalogue.js'
import { buildTestApp } from '../helpers/build-app.js'

const ENV = { PUBLIC_BASE_URL: 'https://api.example.com/v1', STAGING_BASE_URL: 'https://staging.example.com/v1' }

interface Operation {
  operationId?: string
  deprecated?: boolean
  security?: unknown[]
  responses: Record<string, { headers?: Record<string, unknown>, content?: Record<string, { schema: unknown }> }>
  parameters?: Array<{ name: string, in: string, schema: Record<string, unknown> }>
  [extension: `x-${string}`]: unknown
}
type Document = {
  openapi: string
  info: { version: string }
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

  test('When it is fetched as YAML, then it is the same document', async (t) => {
    const { document, app } = await fetchDocument(t)

    const res = await app.inject({ method: 'GET', url: '/v1/openapi.yaml' })

    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/yaml/)
    assert.deepEqual(parseYaml(res.body), document)
  })

  test('When the deployments are configured, then both are servers and bearer auth applies globally', async (t) => {
    const { document } = await fetchDocument(t)

    assert.deepEqual(document.servers.map((server) => server.url), [ENV.PUBLIC_BASE_URL, ENV.STAGING_BASE_URL])
    assert.deepEqual(document.security, [{ bearerAuth: [] }])
    assert.deepEqual(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: 'An API key issued by the operator (`npx petstore keys create --name … [--role read|write]`); a `read` key may call only the operations that read.' })
  })

  test('When the operations are read, then ids, deprecation and vendor extensions are as the spec says', async (t) => {
    const { document } = await fetchDocument(t)

    assert.equal(operation(document, '/pets', 'get').operationId, 'listPets')
    assert.equal(operation(document, '/pets', 'post').operationId, 'createPet')
    const getPet = operation(document, '/pets/{petId}', 'get')
    assert.equal(getPet.operationId, 'getPet')
    assert.equal(getPet.deprecated, true)
    assert.equal(getPet['x-deprecated-sunset'], '2030-12-05')
    const orders = operation(document, '/store/orders', 'get')
    assert.equal(orders['x-stability'], 'experimental')
    assert.equal(orders['x-hideTryItPanel'], true)
    assert.ok(orders.responses['501'] !== undefined)
  })

  test('When responses are read, then every error is an Error and the headers are documented', async (t) => {
    const { document } = await fetchDocument(t)

    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) >= 400) {
            assert.deepEqual(response.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${method} ${path} ${status}`)
          }
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

  test('When the schemas are read, then limits and the error codes are schema keywords', async (t) => {
    const { document } = await fetchDocument(t)

    const limit = operation(document, '/pets', 'get').parameters?.find((p) => p.name === 'limit')
    assert.deepEqual([limit?.schema.minimum, limit?.schema.maximum, limit?.schema.default], [1, 100, 20])
    const newPet = document.components.schemas.NewPet?.properties
    assert.equal(newPet?.name?.maxLength, 100)
    assert.equal(newPet?.status?.default, 'available')
    assert.equal(newPet?.categoryId?.maximum, Number.MAX_SAFE_INTEGER)
    assert.deepEqual(document.components.schemas.Error?.properties?.code?.enum, ERROR_CODES)
  })

  test('When the app lists its routes, then every one it serves but the /docs page is in the document', async (t) => {
    const { document, app } = await fetchDocument(t)
    const documented = new Set<string>()
    for (const [path, item] of Object.entries(document.paths)) {
      const fullPath = path === '/healthz' || path === '/readyz' ? path : `/v1${path}`
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${fullPath.replace(/\{(\w+)\}/g, ':$1')}`)
    }

    // the reference page shows the API; it is no part of it
    const isDocsPage = (url: string): boolean => url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`)
    const served = app.registeredRoutes.filter((route) => !route.methodNotAllowed && route.method !== 'HEAD' && !isDocsPage(route.url))

    assert.ok(served.length >= 8)
    for (const route of served) assert.ok(documented.has(`${route.method} ${route.url}`), `${route.method} ${route.url} is documented`)
  })
})
