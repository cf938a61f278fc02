import { Counter, type Registry } from 'prom-client'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { addBearerAuth, type FailedAuthGuard } from './bearer-auth.js'
import { addRoleCheck } from './role-check.js'
import { createKeyStore } from './store/create-key-store.js'
import type { KeyStore } from './store/key-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The API keys created with `npx petstore keys create` (hashes only). */
    keyStore: KeyStore
  }
}

/** The keys capability: its store, on the app's database, its times from the app's clock. */
export const keys = fp(async (app) => {
  app.decorate('keyStore', app.instrumentStore(createKeyStore(app.database, app.clock)))
}, { name: 'petstore-keys', dependencies: ['petstore-database'] })

/**
 * Makes every route of `scope` (an encapsulated context, e.g. `/v1`) answer 401 unless the request carries
 * a valid key: the environment's keys and the store's; each failure is counted by `guard`.
 */
export function authenticate (scope: FastifyInstance, guard: FailedAuthGuard): void {
  const { config } = scope
  addBearerAuth(scope, {
    store: scope.keyStore, environmentKeys: config.apiKeys, readEnvironmentKeys: config.readApiKeys, adminEnvironmentKeys: config.adminApiKeys, cacheMs: config.apiKeyCacheMs, guard
  })
}

/**
 * After {@link authenticate}, before the routes: an operation answers a key whose role is below the one it needs
 * (by method, or the route's `config.requiredRole`: `ADMIN_ONLY`) 403 `insufficient_scope`, counted by operation and key,
 * each such key's series at 0 from its first request.
 */
export function authorize (scope: FastifyInstance): void {
  const insufficientScope = insufficientScopeCounter(scope.metrics.registry)
  addRoleCheck(scope, {
    onRefused: (key, operation) => { insufficientScope.inc({ operation, api_key: key.name, role: key.role }) },
    // a key's series from its first request, at 0 (Prometheus's advice on missing series: rate() then sees the first refusal)
    onRefusable: (key, operations) => { for (const operation of operations) insufficientScope.inc({ operation, api_key: key.name, role: key.role }, 0) }
  })
}

// one per registry: every context that checks roles counts into the same series
const insufficientScopeCounters = new WeakMap<Registry, Counter<'operation' | 'api_key' | 'role'>>()

function insufficientScopeCounter (registry: Registry): Counter<'operation' | 'api_key' | 'role'> {
  let counter = insufficientScopeCounters.get(registry)
  if (counter === undefined) {
    counter = new Counter({
      name: 'petstore_insufficient_scope_total',
      help: 'Requests answered 403 insufficient_scope (a key whose role is below the one the operation needs: read calling what writes, read or write what only admin keys may), by operation, API key name and role.',
      labelNames: ['operation', 'api_key', 'role'] as const,
      registers: [registry]
    })
    insufficientScopeCounters.set(registry, counter)
  }
  return counter
}
