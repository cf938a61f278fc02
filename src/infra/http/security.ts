import type { FastifyInstance } from 'fastify'

/** Request headers a browser client may send across origins (`Last-Event-ID`: a page resuming the event stream). */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'Last-Event-ID', 'X-Request-Id']

/** Response headers a browser client may read across origins (beyond the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = [
  'Link', 'Location', 'ETag', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id',
  'Idempotent-Replayed', 'Deprecation', 'Sunset', 'WWW-Authenticate', 'Allow'
]

// a browser may reuse a preflight answer this long (seconds)
const PREFLIGHT_MAX_AGE_SECONDS = 600

/**
 * The security headers every answer carries (names in lower case): what a JSON API needs, after the
 * OWASP REST Security Cheat Sheet. Nothing here renders HTML, so the content security policy allows
 * nothing at all and no page may frame an answer; answers carry one client's catalogue behind its key,
 * so no cache may keep them (a route may send its own `Cache-Control` instead); TLS is terminated in
 * front of the service in production, and HSTS is harmless over plain HTTP. The `/docs` page sends
 * its own policy (src/docs/api-reference.ts).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY'
})

/** The security headers every answer carries: {@link SECURITY_HEADERS}. */
export function securityHeaders (): Readonly<Record<string, string>> {
  return SECURITY_HEADERS
}

/** CORS for the listed origins only (none: CORS off). */
export async function registerCors (app: FastifyInstance, corsOrigins: readonly string[]): Promise<void> {
  if (corsOrigins.length === 0) return
  const anyOrigin = corsOrigins.includes('*')
  // loaded only when CORS is on: the start-up of a service without it does not pay for the module
  const { default: cors } = await import('@fastify/cors')
  await app.register(cors, {
    // false (not an error) for other origins: the request goes on without CORS headers, and a
    // preflight from them falls through to the route, which answers 401/404/405 as usual
    origin: (origin, callback) => { callback(null, origin !== undefined && (anyOrigin || corsOrigins.includes(origin))) },
    // every method an operation may take, not the ones today's operations happen to use: a capability's new
    // operation (categories' PUT) needs no line here; the key in Authorization is what authorizes, not the method
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // keys travel in Authorization, never in cookies
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // an allowed origin's OPTIONS without Access-Control-Request-Method would otherwise get a text/plain 400
    strictPreflight: false
  })
}
