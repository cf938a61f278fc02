// Printed after `npm test`, so that skipped PostgreSQL suites cannot go unnoticed.
if (process.env.TEST_DATABASE_URL === undefined || process.env.TEST_DATABASE_URL.trim() === '') {
  process.stdout.write('\nNOTE: the PostgreSQL suites were skipped because TEST_DATABASE_URL is not set.\n' +
    'Run them with: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test\n')
}
