import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Parser } from '@asyncapi/parser'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { parse as parseYaml } from 'yaml'
import { DOCUMENT_MAX_LENGTH } from '../../src/capabilities/docs/openapi-document-routes.js'
import { buildTestApp } from '../helpers/build-app.js'

const ENV = { PUBLIC_BASE_URL: 'https://api.example.com/v1', STAGING_BASE_URL: 'https://staging.example.com/v1' }

interface Message {
  name: string
  payload: { $ref: string }
  headers: Record<string, unknown>
  examples: Array<{ headers: Record<string, string>, payload: { id: number, type: string } }>
}
interface AsyncApi {
  asyncapi: string
  info: Record<string, unknown>
  servers: Record<string, { host: string, pathname: string, protocol: string }>
  channels: Record<string, { address: string | null, servers: Array<{ $ref: string }>, messages: Record<string, Message> }>
  operations: Record<string, { action: string, channel: { $ref: string }, messages: Array<{ $ref: string }> }>
  components: { schemas: Record<string, unknown> }
}

// both buses configured, with credentials in their URLs (which no document may show); names of their own, nothing is published
const BUSES_ENV = {
  ...ENV,
  NATS_URL: 'nats://relay:nats-secret@127.0.0.1:4222',
  NATS_STREAM: 'ASYNCAPI_DOCUMENT_TEST',
  NATS_SUBJECT_PREFIX: 'asyncapi-document-test.events',
  AMQP_URL: 'amqp://guest:amqp-secret@127.0.0.1:5672',
  AMQP_EXCHANGE: 'asyncapi-document-test.events'
}

async function fetchDocuments (t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = ENV) {
  const api = await buildTestApp(t, { env, withKey: false })
  const res = await api.app.inject({ method: 'GET', url: '/v1/asyncapi.json' })
  assert.equal(res.statusCode, 200, res.body)
  assert.match(String(res.headers['content-type']), /^application\/json/)
  const openApi = (await api.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ components: { schemas: Record<string, unknown> }, externalDocs?: { url: string }, info: { description: string } }>()
  return { app: api.app, text: res.body, document: res.json<AsyncApi>(), openApi }
}

describe('the served AsyncAPI document', () => {
  test('When it is fetched without a key, then @asyncapi/parser reads it as AsyncAPI 3.0 with no error and no warning', async (t) => {
    const { text, document } = await fetchDocuments(t)

    const { document: parsed, diagnostics } = await new Parser().parse(text)
    // spectral's severities: 0 error, 1 warning, 2 information, 3 hint (only "3.1.0 is out" is reported)
    assert.deepEqual(diagnostics.filter(({ severity }) => Number(severity) <= 1).map(({ code, message, path }) => `${String(code)} at ${path.join('.')}: ${message}`), [])
    assert.ok(parsed !== undefined)
    assert.equal(document.asyncapi, '3.0.0')
    assert.equal(document.info['x-stability'], 'beta')
    assert.ok(text.length < DOCUMENT_MAX_LENGTH)
    // int64 bounds digit for digit, as in the OpenAPI document (a double would write 9223372036854775808)
    assert.match(text, /"maximum":9223372036854775807[,}]/)
  })

  test('When it is fetched as YAML, then it is the same document', async (t) => {
    const { app, document } = await fetchDocuments(t)

    const res = await app.inject({ method: 'GET', url: '/v1/asyncapi.yaml' })

    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/yaml/)
    assert.deepEqual(parseYaml(res.body), document)
    assert.deepEqual(parseYaml(res.body, { schema: 'yaml-1.1' }), document)
    const { diagnostics } = await new Parser().parse(res.body)
    assert.deepEqual(diagnostics.filter(({ severity }) => Number(severity) <= 1).map(({ message }) => message), [])
  })

  test('When its messages are read, then every registered event type is a message of the stream and of webhooks, its payload the OpenAPI document\'s schema', async (t) => {
    const { app, document, openApi } = await fetchDocuments(t)

    assert.deepEqual(Object.keys(document.channels), ['eventStream', 'webhooks'])
    for (const [id, channel] of Object.entries(document.channels)) {
      // the stream's last message, when retention passed it, is no event: the Error of the 410
      const { streamError, ...events } = channel.messages
      assert.deepEqual(streamError === undefined ? undefined : [streamError.name, streamError.payload.$ref], id === 'eventStream' ? ['error', '#/components/schemas/Error'] : undefined)
      assert.deepEqual(Object.values(events).map(({ name }) => name), app.eventTypes.types)
      for (const { name, payload } of Object.values(events)) {
        assert.equal(payload.$ref, `#/components/schemas/${String(app.eventTypes.definitionOf(name)?.schema.$id)}`)
      }
    }
    // the same schemas, word for word, and every one a payload refers to is there
    for (const [name, schema] of Object.entries(document.components.schemas)) assert.deepEqual(schema, openApi.components.schemas[name], name)
    assert.ok(['Pet', 'Order', 'PetChanges', 'PetCreatedEvent', 'OrderUpdatedEvent'].every((name) => name in document.components.schemas))
    for (const ref of JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? []) {
      assert.ok(ref.slice('#/components/schemas/'.length) in document.components.schemas, ref)
    }
  })

  test('When the examples are read, then each is valid against its message\'s payload and headers, and the frame fields name its event', async (t) => {
    const { document } = await fetchDocuments(t)
    const ajv = new Ajv2020({ strict: false, validateSchema: false })
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) })
    ajv.addFormat('date-time', true)
    ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 })
    // the parts examples are checked against (AsyncAPI's own `id` is no JSON Schema keyword)
    ajv.addSchema({ $id: 'asyncapi', components: document.components, channels: document.channels })

    let examples = 0
    for (const [channelId, channel] of Object.entries(document.channels)) {
      for (const [key, message] of Object.entries(channel.messages)) {
        assert.equal(message.examples.length, 1, `${channelId} ${key}`)
        for (const example of message.examples) {
          examples++
          const payload = ajv.compile({ $ref: `asyncapi${message.payload.$ref}` })
          assert.ok(payload(example.payload), `${channelId} ${key}: ${ajv.errorsText(payload.errors)}`)
          const headers = ajv.compile({ $ref: `asyncapi#/channels/${channelId}/messages/${key}/headers` })
          assert.ok(headers(example.headers), `${channelId} ${key} headers: ${ajv.errorsText(headers.errors)}`)
          if (key !== 'streamError') assert.equal(example.payload.type, message.name)
        }
      }
    }
    // every event type on both channels, and the stream's error
    assert.equal(examples, 2 * Object.keys(document.channels.eventStream?.messages ?? {}).length - 1)
    const { streamError, ...streamEvents } = document.channels.eventStream?.messages ?? {}
    for (const { examples: [example] } of Object.values(streamEvents)) {
      assert.deepEqual(example?.headers, { id: String(example?.payload.id), event: example?.payload.type })
    }
    assert.deepEqual([streamError?.examples[0]?.headers, (streamError?.examples[0]?.payload as { code?: string } | undefined)?.code], [{ event: 'error' }, 'events_expired'])
    for (const { examples: [example] } of Object.values(document.channels.webhooks?.messages ?? {})) {
      assert.equal(example?.headers['webhook-id'], String(example?.payload.id))
    }
  })

  test('When its servers and operations are read, then the stream is on the service\'s servers, webhooks on the registered endpoints, and the consumer receives on both', async (t) => {
    const { document } = await fetchDocuments(t)

    assert.deepEqual(Object.keys(document.servers), ['production', 'staging', 'webhookEndpoint'])
    assert.deepEqual([document.servers.production?.host, document.servers.production?.pathname, document.servers.production?.protocol], ['api.example.com', '/v1', 'https'])
    assert.equal(document.servers.staging?.host, 'staging.example.com')
    assert.equal(document.channels.eventStream?.address, '/events')
    assert.deepEqual(document.channels.eventStream?.servers, [{ $ref: '#/servers/production' }, { $ref: '#/servers/staging' }])
    assert.deepEqual(document.channels.webhooks?.servers, [{ $ref: '#/servers/webhookEndpoint' }])
    for (const [id, channel] of Object.entries(document.channels)) {
      const operations = Object.values(document.operations).filter((operation) => operation.channel.$ref === `#/channels/${id}`)
      assert.equal(operations.length, 1, id)
      assert.equal(operations[0]?.action, 'receive')
      assert.deepEqual(operations[0]?.messages, Object.keys(channel.messages).map((key) => ({ $ref: `#/channels/${id}/messages/${key}` })))
    }
  })

  test('When the OpenAPI document is read, then it says where the AsyncAPI document is', async (t) => {
    const { openApi } = await fetchDocuments(t)

    assert.equal(openApi.externalDocs?.url, 'https://api.example.com/v1/asyncapi.json')
    assert.match(openApi.info.description, /`\/v1\/asyncapi\.json` and `\/v1\/asyncapi\.yaml`/)
  })

  test('When NATS_URL and AMQP_URL are set, then each bus is a server and a channel of CloudEvent messages, valid, its examples too, and no credential shows', async (t) => {
    const { app, text, document } = await fetchDocuments(t, BUSES_ENV)

    const { diagnostics } = await new Parser().parse(text)
    assert.deepEqual(diagnostics.filter(({ severity }) => Number(severity) <= 1).map(({ code, message, path }) => `${String(code)} at ${path.join('.')}: ${message}`), [])
    assert.deepEqual(Object.keys(document.channels), ['eventStream', 'webhooks', 'nats', 'rabbitmq'])
    assert.deepEqual([document.servers.nats?.host, document.servers.nats?.protocol], ['127.0.0.1:4222', 'nats'])
    assert.deepEqual([document.servers.rabbitmq?.host, document.servers.rabbitmq?.protocol], ['127.0.0.1:5672', 'amqp'])
    assert.equal(document.channels.nats?.address, 'asyncapi-document-test.events.{eventType}')
    assert.doesNotMatch(text, /nats-secret|amqp-secret|relay:|guest:/)
    const ajv = new Ajv2020({ strict: false, validateSchema: false })
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) })
    ajv.addFormat('date-time', true)
    ajv.addFormat('uri', true)
    ajv.addSchema({ $id: 'asyncapi', components: document.components, channels: document.channels })
    for (const id of ['nats', 'rabbitmq']) {
      const messages = document.channels[id]?.messages ?? {}
      assert.deepEqual(Object.values(messages).map(({ name }) => name), app.eventTypes.types, id)
      for (const [key, message] of Object.entries(messages)) {
        const example = message.examples[0] as unknown as { headers: Record<string, string>, payload: { id: string, source: string, type: string, subject: string, specversion: string } }
        const payload = ajv.compile({ $ref: `asyncapi#/channels/${id}/messages/${key}/payload` })
        assert.ok(payload(example.payload), `${id} ${key}: ${ajv.errorsText(payload.errors)}`)
        const headers = ajv.compile({ $ref: `asyncapi#/channels/${id}/messages/${key}/headers` })
        assert.ok(headers(example.headers), `${id} ${key} headers: ${ajv.errorsText(headers.errors)}`)
        assert.deepEqual([example.payload.specversion, example.payload.type], ['1.0', message.name])
        assert.equal(`urn:uuid:${Object.values(example.headers)[0] ?? ''}`, `${example.payload.source}:${example.payload.id}`, `${id} ${key}: the broker's message id is the deployment's and the event's`)
      }
    }
  })
})
