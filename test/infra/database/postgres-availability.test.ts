import assert from 'node:assert/strict'
import { test } from 'node:test'
import { requiresPostgres, TEST_DATABASE_URL, withPostgres } from '../../helpers/databases.js'

// Without TEST_DATABASE_URL this is the one skipped test that says how to run the PostgreSQL suites;
// with it (as in CI), an unreachable server fails here with a plain message instead of being skipped
test('When TEST_DATABASE_URL is set, then that PostgreSQL server answers', requiresPostgres(), async () => {
  const version = await withPostgres(async (client) => (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v)
    .catch((error: unknown) => assert.fail(`TEST_DATABASE_URL=${String(TEST_DATABASE_URL)} is not reachable: ${String(error)}`))

  assert.match(version ?? '', /^\d+/)
})
