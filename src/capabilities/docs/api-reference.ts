import { readFile } from 'node:fs/promises'
import type { FastifySwaggerUiConfigOptions } from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { stringifyJson } from '../../infra/json/exact-json.js'
import type { ServedDocuments } from './served-documents.js'

/** Where the API reference page lives: outside `/v1` and public, like the document it shows. */
export const DOCS_PREFIX = '/docs'

/**
 * The page's content security policy: scripts, styles, the document and "try it" requests from this
 * service alone; `data:` images are Swagger UI's icons (in its CSS). Nothing inline is needed.
 */
export const DOCS_CSP: Readonly<Record<string, string>> = Object.freeze({
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'"
})

const PAGE_CSP_HEADER = Object.entries(DOCS_CSP).map(([directive, value]) => `${directive} ${value};`).join(' ')

// beside this module in src/ and in dist/ (the build copies it there); from the server's bundle in
// dist/bin/, in dist/capabilities/docs/
const PLUGIN_FILE = new URL(import.meta.url.includes('/capabilities/docs/') ? './swagger-ui-plugin.js' : '../capabilities/docs/swagger-ui-plugin.js', import.meta.url)

type SwaggerUiPlugin = NonNullable<FastifySwaggerUiConfigOptions['plugins']>[number]

/** What the plugin file defines on the page. */
interface PageGlobals {
  petstoreSwaggerUiPlugin: SwaggerUiPlugin
}

// @fastify/swagger-ui writes uiConfig functions into its swagger-initializer.js as source text
// (Function#toString), so this runs in the browser: it may use only what the page defines
function usePetstorePlugin (system: unknown): ReturnType<SwaggerUiPlugin> {
  return (globalThis as unknown as PageGlobals).petstoreSwaggerUiPlugin(system)
}
// ...as the text toString gives, fixed here so that the page's bytes do not depend on which tool printed
// this module (tsc's modules, the esbuild bundle and tsx each indent it their own way)
usePetstorePlugin.toString = () => 'function usePetstorePlugin(system) {\n    return globalThis.petstoreSwaggerUiPlugin(system);\n}'

function serversOf (document: Readonly<Record<string, unknown>>): unknown[] {
  return Array.isArray(document.servers) ? document.servers : []
}

interface PageParameter { required?: boolean, example?: unknown, description?: string }

/**
 * The paths as the page shows them: Swagger UI fills "Try it out" with each parameter's example,
 * which for an optional one would change the request (a cursor from the example is refused, an
 * example Idempotency-Key would be reused by every create), so an optional parameter's example
 * moves into its description and its field starts empty. Required ones (a pet's id) keep theirs.
 */
export function pathsForThePage (paths: unknown): unknown {
  // a copy walked by hand, not a JSON round trip: the int64 bounds are bigints
  const copy = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return key === 'parameters' ? (value as PageParameter[]).map(forThePage) : value.map((item) => copy(item))
    if (value === null || typeof value !== 'object') return value
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, copy(inner, name)]))
  }
  return copy(paths ?? {})
}

function forThePage ({ example, ...parameter }: PageParameter): PageParameter {
  return parameter.required === true || example === undefined
    ? { ...parameter, ...(example === undefined ? {} : { example }) }
    : { ...parameter, description: `${parameter.description ?? ''} Example: \`${typeof example === 'string' ? example : stringifyJson(example)}\`.`.trim() }
}

// headers of the page's own answer that describe its connection, not the one it is passed on over
const CONNECTION_HEADERS = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding'])

/** The page's copy of the document: "try it" goes to the service that served the page, whatever address it was opened at. */
export function pageDocumentOf (document: Readonly<Record<string, unknown>>): Record<string, unknown> {
  // the document's own servers are absolute, and the page may only call its own origin; they stay listed after it
  return {
    ...document,
    servers: [{ url: '/v1', description: 'This service (where this page was loaded from)' }, ...serversOf(document)],
    paths: pathsForThePage(document.paths)
  }
}

/**
 * The page: @fastify/swagger-ui in an app of its own, on the served documents, built once, by the first
 * request for it. @fastify/swagger-ui and the static file server it brings were about a sixth of start-up,
 * and with the documents 16 MB of an idle instance (docs/performance.md#start-up).
 */
export class ReferencePage {
  readonly #app: FastifyInstance
  readonly documents: ServedDocuments
  #page: Promise<FastifyInstance> | undefined

  constructor (app: FastifyInstance, documents: ServedDocuments) {
    this.#app = app
    this.documents = documents
  }

  async page (): Promise<FastifyInstance> {
    if (this.#page === undefined) {
      this.#page = buildPage(this.#app).catch((error: unknown) => {
        this.#page = undefined
        throw error
      })
      this.#app.ignoreLoadDuring(this.#page)
    }
    return this.#page
  }
}

/**
 * `GET /docs`: Swagger UI on the served OpenAPI document, every asset from this service
 * (the Swagger UI build shipped inside @fastify/swagger-ui). Its routes are hidden from the document.
 *
 * Only two routes exist here (`/docs` and `/docs/*`); every request is answered by the page's app
 * (status, headers, body), within this app's hooks: its security headers, metrics and access line are
 * this app's. What the page does not serve is this app's 404. The page's documents (`/docs/json`,
 * `/docs/yaml`) are answered from the texts written once.
 */
const apiReference: FastifyPluginAsync<{ page: ReferencePage }> = async (app, { page }) => {
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const path = request.url.split('?', 1)[0]
    if (path === `${DOCS_PREFIX}/json` || path === `${DOCS_PREFIX}/yaml`) {
      const { pageJson, pageYaml } = await page.documents.texts()
      // the page's own policy, as @fastify/swagger-ui gives every answer of the page
      reply.header('content-security-policy', PAGE_CSP_HEADER)
      return path.endsWith('json')
        ? reply.type('application/json; charset=utf-8').send(pageJson)
        : reply.type('application/x-yaml').send(pageYaml)
    }
    // HEAD as GET: this app's HEAD route sends the headers of the GET answer, without its body
    const answer = await (await page.page()).inject({ method: 'GET', url: request.url, headers: request.headers })
    if (answer.statusCode === 404) {
      // this app's 404, under the page's CSP where the page gave its own 404 one
      const csp = answer.headers['content-security-policy']
      if (csp !== undefined) reply.header('content-security-policy', csp)
      reply.callNotFound()
      return reply
    }
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !CONNECTION_HEADERS.has(name)) reply.header(name, value)
    }
    reply.code(answer.statusCode)
    // a redirect or a 304 has no body, and no content type to add for one
    return answer.rawPayload.length === 0 ? reply.send() : reply.send(answer.rawPayload)
  }
  app.get(DOCS_PREFIX, { schema: { hide: true } }, serve)
  app.get(`${DOCS_PREFIX}/*`, { schema: { hide: true } }, serve)
}

/** The page: @fastify/swagger-ui in an app of its own; its documents are answered by {@link apiReference} itself. */
async function buildPage (app: FastifyInstance): Promise<FastifyInstance> {
  const [{ default: swaggerUi }, pluginSource] = await Promise.all([import('@fastify/swagger-ui'), readFile(PLUGIN_FILE, 'utf8')])
  const page = Fastify({ logger: false, routerOptions: { maxParamLength: 1000 } })
  // what @fastify/swagger-ui takes from @fastify/swagger (its own /json and /yaml routes are never reached)
  page.decorate('swagger', app.swagger.bind(app))
  await page.register(fp(async () => {}, { name: '@fastify/swagger' }))
  await page.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // loaded after Swagger UI's scripts and before it starts (on window load)
    theme: { title: 'Pet Store API reference', js: [{ filename: 'petstore-plugin.js', content: pluginSource }] },
    uiConfig: {
      plugins: [usePetstorePlugin],
      // no top bar: its logo is an SVG with an inline <style> (which the CSP refuses), and its
      // "explore" box would load other documents; the page shows this service's document only
      layout: 'BaseLayout',
      deepLinking: true,
      displayOperationId: true,
      // the key stays in the page's memory only, never in localStorage
      persistAuthorization: false
    },
    // written into the page as validatorUrl: null, so no badge is fetched from validator.swagger.io
    validatorUrl: false,
    staticCSP: { ...DOCS_CSP }
  })
  await page.ready()
  return page
}

export default apiReference
