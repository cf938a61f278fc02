import type { LoadScenario } from '../_util/load-scenario.js'

const STATUSES = ['available', 'pending', 'sold'] as const

/** The count of pets in each status: three rows the database keeps, whatever the number of pets. */
export const getInventory: LoadScenario = {
  name: 'getInventory',
  description: 'GET /v1/store/inventory',
  requests: () => [{ method: 'GET', path: '/v1/store/inventory' }],
  verify: (body) => typeof body === 'object' && body !== null && STATUSES.every((status) => Number.isInteger((body as Record<string, unknown>)[status]))
    ? undefined
    : 'expected the count of each status'
}
