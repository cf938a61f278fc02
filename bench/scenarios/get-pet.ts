import type { LoadScenario } from '../_util/load-scenario.js'

/** Reads of random existing pets by id (the deprecated getPet): no page cache can help. */
export const getPet: LoadScenario = {
  name: 'getPet',
  description: 'GET /v1/pets/{random seeded id}',
  requests: (_role, facts) => [{ method: 'GET', path: '/v1/pets/', randomIdRange: [facts.minId, facts.maxId] }]
}
