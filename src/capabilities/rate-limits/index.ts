/** Rate limits: per key (after authentication) and per address for failed authentications, in memory or in Redis. */
export { AUTH_FAILURE_WINDOW_MS, limitPerKey, rateLimits } from './register-rate-limits.js'
