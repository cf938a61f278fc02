import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, INSTALL_ROOT, loadConfig } from '../../../src/infra/config/config.js'

function configError (env: Record<string, string>): ConfigError {
  try {
    loadConfig(env, '/srv/petstore')
  } catch (error) {
    assert.ok(error instanceof ConfigError)
    return error
  }
  assert.fail(`expected a ConfigError for ${JSON.stringify(env)}`)
}

describe('loadConfig', () => {
  test('When nothing is set, then the documented defaults apply', () => {
    const config = loadConfig({}, '/srv/petstore')

    assert.deepEqual(config, {
      port: 8080,
      host: '127.0.0.1',
      database: { kind: 'sqlite', path: '/srv/petstore/data/petstore.db' },
      dataDir: '/srv/petstore/data',
      apiKeys: [],
      readApiKeys: [],
      adminApiKeys: [],
      publicBaseUrl: 'http://127.0.0.1:8080/v1',
      stagingBaseUrl: undefined,
      logLevel: 'info',
      apiKeyCacheMs: 0,
      rateLimitMax: 6000,
      rateLimitWindowMs: 60_000,
      authFailureLimit: 20,
      redisUrl: undefined,
      corsOrigins: [],
      metricsPort: undefined,
      trustProxy: false,
      workers: 1,
      tracing: undefined,
      eventRetentionDays: 30,
      eventStreams: { maxPerKey: 100, maxPerInstance: 2000, heartbeatMs: 15_000, maxBacklogBytes: 512 * 1024 },
      webhooks: { timeoutMs: 10_000, retryScheduleMs: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 50_400_000, 50_400_000, 86_400_000], concurrency: 8, endpointConcurrency: 16, pollIntervalMs: 250, allowHttp: false, allowPrivateNetworks: false, allowedNetworks: [] },
      overload: { shedding: true, maxEventLoopDelayMs: 100, maxEventLoopUtilization: 0, maxAcceptQueue: 64 },
      buses: { nats: undefined, amqp: undefined, ignored: [] }
    })
    assert.ok(Object.isFrozen(config))
  })

  test('When every variable is set, then each is parsed', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/petstore',
      DATABASE_URL: 'sqlite:/var/lib/petstore/pets.db',
      PETSTORE_API_KEYS: 'key-one, key-two,key-one',
      PETSTORE_READ_API_KEYS: 'read-one,read-two',
      PETSTORE_ADMIN_API_KEYS: 'admin-one',
      PUBLIC_BASE_URL: 'https://api.example.com/v1/',
      STAGING_BASE_URL: 'https://staging.example.com/petstore/v1',
      LOG_LEVEL: 'WARN',
      API_KEY_CACHE_SECONDS: '3',
      RATE_LIMIT_MAX: '100',
      RATE_LIMIT_WINDOW: '10',
      AUTH_FAILURE_LIMIT: '5',
      REDIS_URL: 'redis://:s3cret@cache.internal:6379/2',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,https://app.example.com',
      METRICS_PORT: '9100',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      WORKERS: '4',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318/',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SDK_DISABLED: 'false',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      EVENT_RETENTION_DAYS: '7',
      EVENT_STREAM_MAX_PER_KEY: '3',
      EVENT_STREAM_MAX_PER_INSTANCE: '50',
      EVENT_STREAM_HEARTBEAT_SECONDS: '5',
      EVENT_STREAM_MAX_BACKLOG_KIB: '64',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_RETRY_SCHEDULE: '100ms, 2s,1d',
      WEBHOOK_CONCURRENCY: '2',
      WEBHOOK_ENDPOINT_CONCURRENCY: '3',
      WEBHOOK_POLL_INTERVAL_MS: '500',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'TRUE',
      WEBHOOK_ALLOWED_NETWORKS: ' 10.20.0.0/16, fd00:1::/64 ',
      OVERLOAD_SHEDDING: 'false',
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '250',
      OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '95',
      OVERLOAD_MAX_ACCEPT_QUEUE: '128',
      NATS_URL: ' nats://user:s3cret@nats.internal:4222 ',
      NATS_STREAM: 'STORE_EVENTS',
      NATS_SUBJECT_PREFIX: 'store.events',
      NATS_STREAM_MAX_AGE_DAYS: '3',
      AMQP_URL: 'amqps://petstore:s3cret@rabbit.internal:5671/shop',
      AMQP_EXCHANGE: 'store.events'
    }, '/srv/petstore')

    assert.deepEqual(config, {
      port: 9000,
      host: '0.0.0.0',
      database: { kind: 'sqlite', path: '/var/lib/petstore/pets.db' },
      dataDir: '/var/lib/petstore',
      apiKeys: ['key-one', 'key-two'],
      readApiKeys: ['read-one', 'read-two'],
      adminApiKeys: ['admin-one'],
      publicBaseUrl: 'https://api.example.com/v1',
      stagingBaseUrl: 'https://staging.example.com/petstore/v1',
      logLevel: 'warn',
      apiKeyCacheMs: 3000,
      rateLimitMax: 100,
      rateLimitWindowMs: 10_000,
      authFailureLimit: 5,
      redisUrl: 'redis://:s3cret@cache.internal:6379/2',
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      metricsPort: 9100,
      trustProxy: '10.0.0.0/8, 192.168.1.1',
      workers: 4,
      tracing: { tracesUrl: 'http://collector.internal:4318/v1/traces', sampler: { name: 'parentbased_traceidratio', parentBased: true, ratio: 0.25 } },
      eventRetentionDays: 7,
      eventStreams: { maxPerKey: 3, maxPerInstance: 50, heartbeatMs: 5_000, maxBacklogBytes: 64 * 1024 },
      webhooks: { timeoutMs: 2500, retryScheduleMs: [100, 2000, 86_400_000], concurrency: 2, endpointConcurrency: 3, pollIntervalMs: 500, allowHttp: true, allowPrivateNetworks: true, allowedNetworks: ['10.20.0.0/16', 'fd00:1::/64'] },
      overload: { shedding: false, maxEventLoopDelayMs: 250, maxEventLoopUtilization: 0.95, maxAcceptQueue: 128 },
      buses: {
        nats: { url: 'nats://user:s3cret@nats.internal:4222', stream: 'STORE_EVENTS', subjectPrefix: 'store.events', streamMaxAgeMs: 3 * 86_400_000 },
        amqp: { url: 'amqps://petstore:s3cret@rabbit.internal:5671/shop', exchange: 'store.events' },
        ignored: []
      }
    })
  })

  test('When RATE_LIMIT_MAX is 0 or TRUST_PROXY names hops, then limiting is off and the hops are counted', () => {
    assert.equal(loadConfig({ RATE_LIMIT_MAX: '0' }).rateLimitMax, 0)
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true)
    assert.deepEqual(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  })

  test('When EVENT_RETENTION_DAYS is outside 1 to 3650 or not an integer, then the error names it and its range', () => {
    for (const value of ['0', '3651', '1.5', '-1', 'week']) {
      const error = configError({ EVENT_RETENTION_DAYS: value })
      assert.equal(error.variable, 'EVENT_RETENTION_DAYS')
      assert.match(error.message, /must be an integer from 1 to 3650/)
    }
    assert.equal(loadConfig({ EVENT_RETENTION_DAYS: '3650' }).eventRetentionDays, 3650)
  })

  test('When a WEBHOOK_ or OVERLOAD_ variable is wrong, then the error names it and what it must be', () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ WEBHOOK_RETRY_SCHEDULE: '5s,soon' }, 'WEBHOOK_RETRY_SCHEDULE', /got "soon"/],
      [{ WEBHOOK_RETRY_SCHEDULE: '8d' }, 'WEBHOOK_RETRY_SCHEDULE', /1ms to 7d/],
      [{ WEBHOOK_RETRY_SCHEDULE: '0s' }, 'WEBHOOK_RETRY_SCHEDULE', /got "0s"/],
      [{ WEBHOOK_TIMEOUT_MS: '50' }, 'WEBHOOK_TIMEOUT_MS', /from 100 to 60000/],
      [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY', /from 1 to 256/],
      [{ WEBHOOK_ALLOW_HTTP: 'yes' }, 'WEBHOOK_ALLOW_HTTP', /must be true or false/],
      [{ WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' }, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', /must be true or false/],
      [{ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8, 192.168.1.0' }, 'WEBHOOK_ALLOWED_NETWORKS', /CIDR notation .*got "192\.168\.1\.0"/],
      [{ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/33' }, 'WEBHOOK_ALLOWED_NETWORKS', /got "10\.0\.0\.0\/33"/],
      [{ WEBHOOK_ALLOWED_NETWORKS: 'intranet/24' }, 'WEBHOOK_ALLOWED_NETWORKS', /got "intranet\/24"/],
      [{ OVERLOAD_SHEDDING: 'off' }, 'OVERLOAD_SHEDDING', /must be true or false/],
      [{ OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '101' }, 'OVERLOAD_MAX_EVENT_LOOP_UTILIZATION', /from 0 to 100/],
      [{ OVERLOAD_MAX_ACCEPT_QUEUE: 'many' }, 'OVERLOAD_MAX_ACCEPT_QUEUE', /integer/],
      [{ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0.5' }, 'OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', /integer/]
    ]
    for (const [env, variable, message] of cases) {
      const error = configError(env)
      assert.equal(error.variable, variable)
      assert.match(error.message, message)
    }
  })

  test('When only NATS_URL or AMQP_URL is set, then its bus has the documented stream, subjects or exchange', () => {
    assert.deepEqual(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222' }).buses,
      { nats: { url: 'nats://127.0.0.1:4222', stream: 'PETSTORE_EVENTS', subjectPrefix: 'petstore.events', streamMaxAgeMs: 30 * 86_400_000 }, amqp: undefined, ignored: [] })
    assert.deepEqual(loadConfig({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' }).buses, { nats: undefined, amqp: { url: 'amqp://guest:guest@127.0.0.1:5672', exchange: 'petstore.events' }, ignored: [] })
    // the stream keeps what the feed keeps, unless told otherwise
    assert.equal(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222', EVENT_RETENTION_DAYS: '7' }).buses.nats?.streamMaxAgeMs, 7 * 86_400_000)
  })

  test('When a bus variable is set without its URL, then it is listed as ignored (the server warns of it)', () => {
    assert.deepEqual(loadConfig({ NATS_STREAM: 'STORE', NATS_SUBJECT_PREFIX: 'store.events', AMQP_EXCHANGE: 'store.events' }).buses.ignored, ['NATS_STREAM', 'NATS_SUBJECT_PREFIX', 'AMQP_EXCHANGE'])
    assert.deepEqual(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222', NATS_STREAM: 'STORE', AMQP_EXCHANGE: 'store.events' }).buses.ignored, ['AMQP_EXCHANGE'])
  })

  test('When a NATS_ or AMQP_ variable is wrong, then the error names it and what it must be, never a password', () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ NATS_URL: 'http://user:s3cret@nats:4222' }, 'NATS_URL', /must be nats:\/\//],
      [{ NATS_URL: 'nats://127.0.0.1:4222', NATS_STREAM: 'PETSTORE.EVENTS' }, 'NATS_STREAM', /got "PETSTORE\.EVENTS"/],
      [{ NATS_URL: 'nats://127.0.0.1:4222', NATS_SUBJECT_PREFIX: 'petstore.>' }, 'NATS_SUBJECT_PREFIX', /without wildcards/],
      [{ AMQP_URL: 'rabbit://user:s3cret@rabbit' }, 'AMQP_URL', /must be amqp:\/\//],
      [{ AMQP_URL: 'amqp://rabbit', AMQP_EXCHANGE: 'amq.topic' }, 'AMQP_EXCHANGE', /not starting with amq\./],
      // a URL without a host parses, and every publish would fail later with "Invalid URL": refused at start, echoed
      [{ NATS_URL: 'nats://' }, 'NATS_URL', /with a host, got "nats:\/\/"/],
      [{ NATS_URL: 'nats://user:s3cret@' }, 'NATS_URL', /got "nats:\/\/user:\*\*\*@"/],
      [{ AMQP_URL: 'amqp://guest:s3cret@/vhost' }, 'AMQP_URL', /with a host, got "amqp:\/\/guest:\*\*\*@\/vhost"/],
      [{ NATS_URL: 'nats://127.0.0.1:4222', NATS_STREAM_MAX_AGE_DAYS: '0' }, 'NATS_STREAM_MAX_AGE_DAYS', /whole number of days from 1/]
    ]
    for (const [env, variable, message] of cases) {
      const error = configError(env)
      assert.equal(error.variable, variable)
      assert.match(error.message, message)
      assert.doesNotMatch(error.message, /s3cret/)
    }
  })

  test('When REDIS_URL holds a password and is wrong, then the error does not repeat it', () => {
    const error = configError({ REDIS_URL: 'memcached://:s3cret@cache/0' })

    assert.equal(error.variable, 'REDIS_URL')
    assert.doesNotMatch(error.message, /s3cret/)
  })

  test('When DATABASE_URL is postgres:// or postgresql://, then the pool settings and a 5 s key cache apply', () => {
    for (const url of ['postgres://petstore:s3cret@db.internal:5432/petstore', 'postgresql://db.internal/petstore?sslmode=require']) {
      const config = loadConfig({ DATABASE_URL: url })

      assert.deepEqual(config.database, { kind: 'postgres', url, poolSize: 10, timeoutMs: 2000 })
      assert.equal(config.apiKeyCacheMs, 5000)
    }
    const tuned = loadConfig({ DATABASE_URL: 'postgres://db/petstore', DATABASE_POOL_SIZE: '25', DATABASE_TIMEOUT_MS: '500', API_KEY_CACHE_SECONDS: '0' })
    assert.deepEqual(tuned.database, { kind: 'postgres', url: 'postgres://db/petstore', poolSize: 25, timeoutMs: 500 })
    assert.equal(tuned.apiKeyCacheMs, 0)
  })

  test('When DATABASE_URL holds a password and is wrong, then the error does not repeat it', () => {
    const error = configError({ DATABASE_URL: 'mysql://petstore:s3cret@db/petstore' })

    assert.doesNotMatch(error.message, /s3cret/)
  })

  test('When DATABASE_URL is sqlite::memory: or a relative path, then it is understood, the path relative to the installation', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database, { kind: 'sqlite-memory' })
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:pets.db' }, '/srv').database, { kind: 'sqlite', path: '/srv/pets.db' })
  })

  test('When an OTLP endpoint is set, then traces go to its /v1/traces, unless the traces endpoint is set or the SDK is disabled', () => {
    const everyTrace = { name: 'parentbased_always_on', parentBased: true, ratio: 1 }
    assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing, { tracesUrl: 'http://collector:4318/v1/traces', sampler: everyTrace })
    assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector/otlp/' }).tracing, { tracesUrl: 'https://collector/otlp/v1/traces', sampler: everyTrace })
    assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }).tracing,
      { tracesUrl: 'http://b:4318/traces', sampler: everyTrace })
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing, undefined)
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing, undefined)
  })

  test('When OTEL_TRACES_SAMPLER and its argument are set, then the sampler is understood as the specification names it, a ratio defaulting to 1', () => {
    const samplerOf = (env: Record<string, string>): unknown => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', ...env }).tracing?.sampler
    assert.deepEqual(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }), { name: 'parentbased_traceidratio', parentBased: true, ratio: 0.1 })
    assert.deepEqual(samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '.5' }), { name: 'traceidratio', parentBased: false, ratio: 0.5 })
    assert.deepEqual(samplerOf({ OTEL_TRACES_SAMPLER: 'traceidratio' }), { name: 'traceidratio', parentBased: false, ratio: 1 })
    assert.deepEqual(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }), { name: 'parentbased_traceidratio', parentBased: true, ratio: 0 })
    assert.deepEqual(samplerOf({ OTEL_TRACES_SAMPLER: 'Always_Off' }), { name: 'always_off', parentBased: false, ratio: 0 })
    assert.deepEqual(samplerOf({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }), { name: 'parentbased_always_off', parentBased: true, ratio: 0 })
  })

  test('When DATABASE_URL is unset, then the file is under the installation, not under the current directory', () => {
    const config = loadConfig({})

    assert.deepEqual(config.database, { kind: 'sqlite', path: join(INSTALL_ROOT, 'data', 'petstore.db') })
    assert.ok(existsSync(join(INSTALL_ROOT, 'package.json')), `${INSTALL_ROOT} is not the installation's root`)
  })

  test('When DATA_DIR is set and DATABASE_URL is not, then the store is petstore.db in it; a relative DATA_DIR is under the installation', () => {
    assert.deepEqual(loadConfig({ DATA_DIR: '/var/lib/petstore' }).database, { kind: 'sqlite', path: '/var/lib/petstore/petstore.db' })
    assert.equal(loadConfig({ DATA_DIR: '/var/lib/petstore/' }).dataDir, '/var/lib/petstore')
    assert.equal(loadConfig({ DATA_DIR: 'state' }, '/srv').dataDir, '/srv/state')
    assert.equal(loadConfig({}).dataDir, join(INSTALL_ROOT, 'data'))
  })

  test('When DATA_DIR and DATABASE_URL are both set, then DATABASE_URL names the store', () => {
    assert.deepEqual(loadConfig({ DATA_DIR: '/var/lib/petstore', DATABASE_URL: 'sqlite:/srv/pets.db' }).database, { kind: 'sqlite', path: '/srv/pets.db' })
  })

  test('When WORKERS is 1 to 64 on a store every process can open, then that many workers are asked for', () => {
    assert.equal(loadConfig({ WORKERS: '1' }).workers, 1)
    assert.equal(loadConfig({ WORKERS: ' 64 ' }).workers, 64)
    assert.equal(loadConfig({ WORKERS: '2', DATABASE_URL: 'postgres://db/petstore' }).workers, 2)
    // one process on a private in-memory store is the default, and stays allowed
    assert.equal(loadConfig({ WORKERS: '1', DATABASE_URL: 'sqlite::memory:' }).workers, 1)
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).workers, 1)
  })

  test('When WORKERS is above 1 with DATABASE_URL=sqlite::memory:, then the error names WORKERS: each worker would have a store of its own', () => {
    const error = configError({ WORKERS: '2', DATABASE_URL: 'sqlite::memory:' })

    assert.equal(error.variable, 'WORKERS')
    assert.ok(error.message.startsWith('WORKERS '))
    assert.match(error.message, /sqlite::memory:/)
    assert.doesNotMatch(error.message, /\n/)
  })

  test('When the host is 0.0.0.0, then the default base URL uses localhost', () => {
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '3000' }).publicBaseUrl, 'http://localhost:3000/v1')
  })

  const wrong: Array<[string, Record<string, string>]> = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: '-1' }],
    ['HOST', { HOST: 'http://x' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/pets' }],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:' }],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://db host/pets' }],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: 'ten' }],
    ['DATABASE_TIMEOUT_MS', { DATABASE_TIMEOUT_MS: '99' }],
    ['DATABASE_TIMEOUT_MS', { DATABASE_TIMEOUT_MS: '2s' }],
    ['API_KEY_CACHE_SECONDS', { API_KEY_CACHE_SECONDS: '11' }],
    ['API_KEY_CACHE_SECONDS', { API_KEY_CACHE_SECONDS: '-1' }],
    ['PETSTORE_API_KEYS', { PETSTORE_API_KEYS: 'good-key,,other' }],
    ['PETSTORE_API_KEYS', { PETSTORE_API_KEYS: 'has space' }],
    ['PETSTORE_READ_API_KEYS', { PETSTORE_READ_API_KEYS: 'good-key,,other' }],
    ['PETSTORE_READ_API_KEYS', { PETSTORE_API_KEYS: 'both-roles', PETSTORE_READ_API_KEYS: 'other,both-roles' }],
    ['PETSTORE_ADMIN_API_KEYS', { PETSTORE_ADMIN_API_KEYS: 'good-key,,other' }],
    ['PETSTORE_ADMIN_API_KEYS', { PETSTORE_API_KEYS: 'both-roles', PETSTORE_ADMIN_API_KEYS: 'both-roles' }],
    ['PETSTORE_ADMIN_API_KEYS', { PETSTORE_READ_API_KEYS: 'read-and-admin', PETSTORE_ADMIN_API_KEYS: 'other,read-and-admin' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'https://api.example.com' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'not a url' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://api.example.com/v1' }],
    ['STAGING_BASE_URL', { STAGING_BASE_URL: 'https://staging.example.com/v2' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['RATE_LIMIT_MAX', { RATE_LIMIT_MAX: '-5' }],
    ['RATE_LIMIT_MAX', { RATE_LIMIT_MAX: 'lots' }],
    ['RATE_LIMIT_WINDOW', { RATE_LIMIT_WINDOW: '0' }],
    ['RATE_LIMIT_WINDOW', { RATE_LIMIT_WINDOW: '1m' }],
    ['AUTH_FAILURE_LIMIT', { AUTH_FAILURE_LIMIT: '0' }],
    ['REDIS_URL', { REDIS_URL: 'localhost:6379' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'https://app.example.com/path' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: 'app.example.com' }],
    ['METRICS_PORT', { METRICS_PORT: '70000' }],
    ['METRICS_PORT', { PORT: '9000', METRICS_PORT: '9000' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'yes please' }],
    ['WORKERS', { WORKERS: '0' }],
    ['WORKERS', { WORKERS: '65' }],
    ['WORKERS', { WORKERS: 'abc' }],
    ['WORKERS', { WORKERS: '-2' }],
    ['WORKERS', { WORKERS: '1.5' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' }],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }],
    ['OTEL_SDK_DISABLED', { OTEL_SDK_DISABLED: 'maybe' }],
    ['OTEL_TRACES_SAMPLER', { OTEL_TRACES_SAMPLER: 'jaeger_remote' }],
    ['OTEL_TRACES_SAMPLER', { OTEL_TRACES_SAMPLER: 'ratio' }],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '1.5', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' }],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '10%', OTEL_TRACES_SAMPLER: 'traceidratio' }],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '-0.1', OTEL_TRACES_SAMPLER: 'traceidratio' }],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_TRACES_SAMPLER_ARG: '0.1' }]
  ]
  for (const [variable, env] of wrong) {
    test(`When ${variable} is ${JSON.stringify(Object.values(env)[0])}, then the error names ${variable}`, () => {
      const error = configError(env)

      assert.equal(error.variable, variable)
      assert.ok(error.message.startsWith(`${variable} `))
      assert.doesNotMatch(error.message, /\n/)
    })
  }
})
