import assert from 'node:assert/strict'
import { test } from 'node:test'
import { serializerCompiler } from '../../../src/infra/http/serialization.js'
import { compileRoutePart, createAjv } from '../../../src/infra/http/validation.js'
import { buildTestApp } from '../../helpers/build-app.js'

// the parts of a route schema Fastify compiles a validator for
const VALIDATED_PARTS = ['body', 'querystring', 'params', 'headers'] as const

test('When the app is built, then every route\'s schema is valid JSON Schema, and each of its validators and serializers compiles', async (t) => {
  // the service compiles them on first use, without the meta-schema check (docs/performance.md#start-up):
  // a mistake must show here rather than as a 500 on a route's first request. The shared schemas are
  // checked as createAjv adds them.
  const { app } = await buildTestApp(t)
  const shared = app.getSchemas()
  const ajv = createAjv(shared, { validateSchema: true })
  const serializerFor = serializerCompiler(shared, {})
  const routes = app.registeredRoutes.filter((route) => route.schema !== undefined)
  assert.ok(routes.length >= 20, `only ${routes.length} routes have a schema`)

  let compiled = 0
  for (const { method, url, schema } of routes) {
    for (const part of VALIDATED_PARTS) {
      const partSchema = schema?.[part]
      if (partSchema === undefined) continue
      // with the meta-schema check on, compiling refuses a schema that is not valid JSON Schema
      assert.doesNotThrow(() => compileRoutePart(ajv, partSchema, part), `${method} ${url} ${part}`)
      compiled++
    }
    for (const [httpStatus, responseSchema] of Object.entries(schema?.response ?? {})) {
      assert.doesNotThrow(() => serializerFor({ schema: responseSchema as object, method, url, httpStatus }), `${method} ${url} ${httpStatus}`)
      compiled++
    }
  }
  assert.ok(compiled >= routes.length, `only ${compiled} validators and serializers compiled`)
})
