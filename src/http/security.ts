import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import helmet, { type HelmetOptions } from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Request headers a browser client may send across origins. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'X-Request-Id']

/** Response headers a browser client may read across origins (beyond the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = [
  'Link', 'Location', 'ETag', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id',
  'Idempotent-Replayed', 'Deprecation', 'Sunset', 'WWW-Authenticate', 'Allow'
]

// a browser may reuse a preflight answer this long (seconds)
const PREFLIGHT_MAX_AGE_SECONDS = 600

let everyAnswer: Readonly<Record<string, string>> | undefined

/**
 * The security headers every answer carries (names in lower case), worked out once: helmet's, tuned
 * for a JSON API, and `Cache-Control: no-store` (a route may send its own instead). Nothing here
 * renders HTML, so the content security policy allows nothing at all.
 */
export function securityHeaders (): Readonly<Record<string, string>> {
  everyAnswer ??= Object.freeze({
    ...helmetHeaders({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      // JSON is never embedded by another site; a cross-origin fetch (CORS) is not affected by this
      crossOriginResourcePolicy: { policy: 'same-origin' },
      referrerPolicy: { policy: 'no-referrer' },
      frameguard: { action: 'deny' },
      // TLS is terminated in front of the service in production; the header is harmless over plain HTTP
      strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true }
    }),
    // answers carry one client's catalogue behind its key: no shared cache may keep them
    'cache-control': 'no-store'
  })
  return everyAnswer
}

/** Security headers on every answer ({@link securityHeaders}), and CORS for the listed origins only. */
export async function addSecurityHeaders (app: FastifyInstance, corsOrigins: readonly string[]): Promise<void> {
  const headers = securityHeaders()
  app.addHook('onRequest', async (_request, reply) => { reply.headers(headers) })

  if (corsOrigins.length === 0) return
  const anyOrigin = corsOrigins.includes('*')
  await app.register(cors, {
    // false (not an error) for other origins: the request goes on without CORS headers, and a
    // preflight from them falls through to the route, which answers 401/404/405 as usual
    origin: (origin, callback) => { callback(null, origin !== undefined && (anyOrigin || corsOrigins.includes(origin))) },
    methods: ['GET', 'HEAD', 'POST', 'PATCH'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // keys travel in Authorization, never in cookies
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // an allowed origin's OPTIONS without Access-Control-Request-Method would otherwise get a text/plain 400
    strictPreflight: false
  })
}

/**
 * The headers helmet sets for `options`, worked out once. They do not depend on the request, so
 * replaying them costs one hook instead of helmet's dozen middlewares per request (docs/performance.md).
 */
export function helmetHeaders (options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader (name: string, value: string | number | readonly string[]) { headers[name.toLowerCase()] = String(value) },
    removeHeader (name: string) { Reflect.deleteProperty(headers, name.toLowerCase()) }
  }
  let failure: unknown
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => { failure = error })
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error('helmet failed to compute its headers', { cause: failure })
  return Object.freeze(headers)
}
