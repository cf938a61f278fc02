import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertError } from '../helpers/assertions.js'
import { pathsForThePage } from '../../src/capabilities/docs/api-reference.js'
import { buildTestApp } from '../helpers/build-app.js'

const EXPECTED_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none';"

// what the page loads: its HTML, Swagger UI's assets, the start-up script, our plugin, the document
const PAGE_PARTS = [
  { url: '/docs', type: /^text\/html/ },
  { url: '/docs/static/swagger-ui-bundle.js', type: /javascript/ },
  { url: '/docs/static/swagger-ui.css', type: /^text\/css/ },
  { url: '/docs/static/swagger-initializer.js', type: /javascript/ },
  { url: '/docs/static/theme/petstore-plugin.js', type: /javascript/ },
  { url: '/docs/json', type: /^application\/json/ }
]

describe('API reference page (/docs), without a browser', () => {
  test('When the page and its assets are fetched without a key, then they answer with the page\'s own self-only CSP', async (t) => {
    const { app } = await buildTestApp(t)

    for (const { url, type } of PAGE_PARTS) {
      const res = await app.inject({ method: 'GET', url })
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`)
      assert.match(String(res.headers['content-type']), type, url)
      assert.equal(res.headers['content-security-policy'], EXPECTED_CSP, url)
      assert.equal(res.headers['x-frame-options'], 'DENY', url)
    }
  })

  test('When the page is served, then it names no other host and starts Swagger UI with the plugin and without a validator', async (t) => {
    const { app } = await buildTestApp(t)

    const page = await app.inject({ method: 'GET', url: '/docs' })
    assert.doesNotMatch(page.body, /(src|href)="(https?:)?\/\//)
    const start = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
    assert.match(start.body, /"plugins":\[function \w+\(system\)\s*\{\s*return globalThis\.petstoreSwaggerUiPlugin\(system\);?\s*\}\]/)
    assert.match(start.body, /validatorUrl: null/)
    const plugin = await app.inject({ method: 'GET', url: '/docs/static/theme/petstore-plugin.js' })
    assert.match(plugin.body, /globalThis\.petstoreSwaggerUiPlugin = function/)
  })

  test('When an unknown path under /docs is asked for, then the answer is the JSON 404 Error', async (t) => {
    const { app } = await buildTestApp(t)
    for (const url of ['/docs/nothing', '/docs/static/nothing.js', '/docs/static/../../package.json']) {
      assertError(await app.inject({ method: 'GET', url }), 'not_found')
    }
  })

  test('When the OpenAPI document is read, then the page\'s routes are not in it', async (t) => {
    const { app } = await buildTestApp(t)
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, unknown> }>()
    assert.deepEqual(Object.keys(document.paths).filter((path) => path.includes('docs')), [])
  })

  test('When the page reads its document, then "try it" goes first to this service (relative /v1), optional parameters start empty, and the served document is unchanged', async (t) => {
    const { app } = await buildTestApp(t, { env: { STAGING_BASE_URL: 'https://staging.example.com/v1' } })

    const served = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ servers: Array<{ url: string }> }>()
    const page = (await app.inject({ method: 'GET', url: '/docs/json' })).json<{ servers: Array<{ url: string }>, paths: unknown }>()

    assert.deepEqual(page.servers.map((server) => server.url), ['/v1', ...served.servers.map((server) => server.url)])
    assert.ok(served.servers.every((server) => server.url !== '/v1'))
    assert.deepEqual(page.paths, pathsForThePage((served as unknown as { paths: unknown }).paths))
    const pageParameters = page.paths as Record<string, Record<string, { parameters?: Array<{ name: string, example?: unknown, description?: string }> }>>
    const cursor = pageParameters['/pets']?.get?.parameters?.find((parameter) => parameter.name === 'cursor')
    assert.equal(cursor?.example, undefined)
    assert.match(cursor?.description ?? '', /Example: `/)
    assert.equal(pageParameters['/pets/{petId}']?.get?.parameters?.find((parameter) => parameter.name === 'petId')?.example, 1)
  })
})
