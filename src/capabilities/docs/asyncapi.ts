import type { Config } from '../../infra/config/config.js'
import type { AsyncApiChannel, AsyncApiContext, EventTypeDefinition } from '../events/index.js'

import { API_LICENSE, API_VERSION } from './openapi.js'

/** The service's own servers (production, staging), as AsyncAPI 3.0 writes them: host and pathname apart. */
export function serviceServers (config: Config): Record<string, unknown> {
  const server = (base: string, description: string): Record<string, unknown> => {
    const url = new URL(base)
    return {
      host: url.host,
      pathname: url.pathname,
      protocol: url.protocol.slice(0, -1),
      description,
      security: [{ $ref: '#/components/securitySchemes/bearerAuth' }]
    }
  }
  return {
    production: server(config.publicBaseUrl, 'Production: the service itself.'),
    ...(config.stagingBaseUrl === undefined ? {} : { staging: server(config.stagingBaseUrl, 'Staging: the service itself.') })
  }
}

/** The `$id`s a schema refers to (`$ref: #/components/schemas/<id>`), anywhere inside it. */
function refsIn (value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) refsIn(item, found)
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      const name = key === '$ref' && typeof inner === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(inner)?.[1] : undefined
      if (name !== undefined) found.add(name)
      else refsIn(inner, found)
    }
  }
}

/**
 * The OpenAPI document's component schemas that the event types' schemas and the channels need, theirs and what they refer to
 * (Pet, Order, …), in the OpenAPI document's order: the same schemas, so the two documents cannot differ.
 */
function eventComponentSchemas (openApiSchemas: Readonly<Record<string, unknown>>, definitions: readonly EventTypeDefinition[], channels: unknown): Record<string, unknown> {
  const needed = new Set(definitions.map(({ schema }) => String(schema.$id)))
  // and what the channels refer to themselves (the stream's last message: the Error)
  refsIn(channels, needed)
  let size = 0
  while (needed.size !== size) {
    size = needed.size
    for (const name of [...needed]) refsIn(openApiSchemas[name], needed)
  }
  return Object.fromEntries(Object.entries(openApiSchemas).filter(([name]) => needed.has(name)))
}

/** The document's description: what it describes and from whose side. */
function describeDocument (context: AsyncApiContext, channels: readonly AsyncApiChannel[]): string {
  return `The events of the Pet Store service (beta): every change of ${context.eventTypes.subjectsProse()} records one event (${context.eventTypes.prose()}), ` +
    'in the transaction of the change, with an id that increases in commit order. ' +
    'This document is written from the consumer\'s side: each operation is what a consumer receives. The events are the ones `GET /v1/events` ' +
    '(`listEvents`, in the OpenAPI document at `/v1/openapi.json`) pages through, with the same schemas, pushed to the consumer ' +
    `instead: each channel (${channels.map(({ id }) => `\`${id}\``).join(', ')}) is one way to receive them. New types may be added: skip a type you do not know.`
}

/**
 * The AsyncAPI 3.0 document of the events, built from the same event schemas as the OpenAPI document
 * (its `components.schemas`, given) and the event types the capabilities registered.
 */
export function asyncApiDocument (context: AsyncApiContext, channels: readonly AsyncApiChannel[], openApiSchemas: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const channelObjects = Object.fromEntries(channels.map((channel) => [channel.id, channel.channel(context)]))
  const servers = Object.assign(serviceServers(context.config), ...channels.map((channel) => channel.servers?.(context) ?? {})) as Record<string, unknown>
  return {
    asyncapi: '3.0.0',
    id: 'urn:petstore:events',
    info: {
      title: 'Pet Store events',
      version: API_VERSION,
      description: describeDocument(context, channels),
      license: { name: API_LICENSE.name },
      tags: [{ name: 'beta', description: 'An addition to v1 that may still change (`x-stability: beta` in the OpenAPI document).' }],
      externalDocs: { description: 'The HTTP API, the feed included (OpenAPI 3.1).', url: `${context.config.publicBaseUrl}/openapi.json` },
      'x-stability': 'beta'
    },
    defaultContentType: 'application/json',
    servers,
    channels: channelObjects,
    operations: Object.assign({}, ...channels.map((channel) => channel.operations(context))) as Record<string, unknown>,
    components: {
      schemas: eventComponentSchemas(openApiSchemas, context.eventTypes.definitions, channelObjects),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key issued by the operator (`npx petstore keys create --name … [--role read|write]`): a `read` key is enough to follow the events.'
        }
      }
    }
  }
}
