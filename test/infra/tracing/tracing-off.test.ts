import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, test } from 'node:test'
import { buildTestApp, testStores } from '../../helpers/build-app.js'

// this file runs in a process of its own (node --test), which imports nothing of tracing itself
const loadedModules = (): string[] => Object.keys(createRequire(import.meta.url).cache)
const TRACING_MODULE = /node_modules\/(@opentelemetry\/(sdk-|exporter-|instrumentation|otlp-|resources)|@fastify\/otel)/

for (const store of testStores()) {
  describe(`tracing off (${store})`, () => {
    test('When OTEL_EXPORTER_OTLP_ENDPOINT is unset, then requests are served and no OpenTelemetry SDK, exporter or instrumentation module is loaded', async (t) => {
      const api = await buildTestApp(t, { store })

      const res = await api.app.inject({ method: 'GET', url: '/v1/pets', headers: api.auth })

      assert.equal(res.statusCode, 200)
      assert.equal(api.config.tracing, undefined)
      assert.deepEqual(loadedModules().filter((path) => TRACING_MODULE.test(path)), [])
    })
  })
}
