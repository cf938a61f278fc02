import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

/** Request headers a browser client may send across origins. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id']

/** Response headers a browser client may read across origins (beyond the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = [
  'Link', 'Location', 'ETag', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id',
  'Idempotent-Replayed', 'Deprecation', 'Sunset', 'WWW-Authenticate', 'Allow'
]

// a browser may reuse a preflight answer this long (seconds)
const PREFLIGHT_MAX_AGE_SECONDS = 600

/**
 * Security headers for a JSON API on every answer, and CORS for the listed origins only.
 * Nothing here renders HTML, so the content security policy allows nothing at all.
 */
export async function addSecurityHeaders (app: FastifyInstance, corsOrigins: readonly string[]): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    // JSON is never embedded by another site; a cross-origin fetch (CORS) is not affected by this
    crossOriginResourcePolicy: { policy: 'same-origin' },
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    // TLS is terminated in front of the service in production; the header is harmless over plain HTTP
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true }
  })

  // answers carry one client's catalogue behind its key: no shared cache may keep them
  app.addHook('onRequest', async (_request, reply) => { reply.header('cache-control', 'no-store') })

  if (corsOrigins.length === 0) return
  const anyOrigin = corsOrigins.includes('*')
  await app.register(cors, {
    // false (not an error) for other origins: the request goes on without CORS headers, and a
    // preflight from them falls through to the route, which answers 401/404/405 as usual
    origin: (origin, callback) => { callback(null, origin !== undefined && (anyOrigin || corsOrigins.includes(origin))) },
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // keys travel in Authorization, never in cookies
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // an allowed origin's OPTIONS without Access-Control-Request-Method would otherwise get a text/plain 400
    strictPreflight: false
  })
}
