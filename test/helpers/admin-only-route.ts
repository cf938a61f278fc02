import type { FastifyInstance } from 'fastify'
import { ADMIN_ONLY, authenticate, authorize } from '../../src/capabilities/keys/index.js'
import { limitPerKey } from '../../src/capabilities/rate-limits/index.js'

/** Where {@link addAdminOnlyRoutes} serves its operations. */
export const ADMIN_ONLY_PATH = '/v1/admin-probe'

/** An operation beside them that any key may call (`getOpenProbe`): a key's first request in their context. */
export const OPEN_PATH = `${ADMIN_ONLY_PATH}/open`

/**
 * Adds to a built (not yet ready) app two operations declared `ADMIN_ONLY`, `GET` and `POST` on
 * {@link ADMIN_ONLY_PATH} (ids `getAdminProbe`, `postAdminProbe`), and {@link OPEN_PATH}, behind the app's own
 * authentication, per-key limit and role check, registered as `/v1` registers them: what the real admin-only
 * operations go through.
 */
export async function addAdminOnlyRoutes (app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    authenticate(scope, app.rateLimits)
    limitPerKey(scope)
    authorize(scope)
    const response = { 200: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }
    scope.get('', { config: { ...ADMIN_ONLY }, schema: { operationId: 'getAdminProbe', response } }, async () => ({ ok: true }))
    scope.post('', { config: { ...ADMIN_ONLY }, schema: { operationId: 'postAdminProbe', response } }, async () => ({ ok: true }))
    scope.get('/open', { schema: { operationId: 'getOpenProbe', response } }, async () => ({ ok: true }))
  }, { prefix: ADMIN_ONLY_PATH })
}
