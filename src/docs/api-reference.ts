import { readFile } from 'node:fs/promises'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifySwaggerUiConfigOptions } from '@fastify/swagger-ui'
import type { FastifyPluginAsync } from 'fastify'
import { stringifyJson } from '../json/exact-json.js'

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

// beside this module: src/docs/ when run from source, dist/docs/ once built (the build copies it there)
const PLUGIN_FILE = new URL('./swagger-ui-plugin.js', import.meta.url)

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

/**
 * `GET /docs`: Swagger UI on the served OpenAPI document, every asset from this service
 * (the Swagger UI build shipped inside @fastify/swagger-ui). Its routes are hidden from the document.
 */
const apiReference: FastifyPluginAsync = async (app) => {
  const pluginSource = await readFile(PLUGIN_FILE, 'utf8')
  await app.register(swaggerUi, {
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
    // "try it" goes to the service that served the page, whatever address it was opened at (the
    // document's own servers are absolute, and the page may only call its own origin); they stay
    // listed after it
    transformSpecification: (document, _request, reply) => {
      // int64 bounds are bigints (2^63 − 1 is no double): written digit for digit, as /v1/openapi.json writes them
      // (the YAML route has set its own type before it calls this, and sends text, which no serializer touches)
      if (!reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8').serializer((payload: unknown) => stringifyJson(payload))
      return {
        ...document,
        servers: [{ url: '/v1', description: 'This service (where this page was loaded from)' }, ...serversOf(document)],
        paths: pathsForThePage(document.paths)
      }
    },
    staticCSP: { ...DOCS_CSP }
  })
}

export default apiReference
