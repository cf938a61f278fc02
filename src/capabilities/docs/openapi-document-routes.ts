import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { overloadedResponse } from '../../infra/schemas/responses.js'
import { API_VERSION } from './openapi.js'
import type { ServedDocuments } from './served-documents.js'

/** A bound on the document's size, in characters (it is about a tenth of it). */
export const DOCUMENT_MAX_LENGTH = 1_048_576

// the Error body is JSON, whatever the document's own type
function yamlOverloadedResponse (): Record<string, unknown> {
  return { description: overloadedResponse().description, headers: overloadedResponse().headers, content: { 'application/json': { schema: overloadedResponse(), examples: overloadedResponse()['x-examples'] } } }
}

/** The served OpenAPI document and the events' AsyncAPI document, each as JSON and YAML, without authentication. */
const openApiDocument: FastifyPluginAsyncTypebox<{ documents: ServedDocuments }> = async (app, { documents }) => {
  const common = { tags: ['operations'], security: [] }
  const example = { openapi: '3.1.0', info: { title: 'Pet Store', version: API_VERSION } }

  type Texts = Awaited<ReturnType<ServedDocuments['texts']>>
  /** Serves one of the texts as JSON: `what` its 200's description, `example` a beginning of it. */
  const serveJson = (url: string, schema: Record<string, unknown>, what: string, example: object, textOf: (texts: Texts) => string): void => {
    app.get(url, {
      schema: { ...schema, response: { 200: { ...Type.Object({}, { additionalProperties: true }), description: what, examples: [example] }, 503: overloadedResponse() } }
    }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(textOf(await documents.texts())))
  }
  /** Serves one of the texts as YAML (its 503 still a JSON Error). */
  const serveYaml = (url: string, schema: Record<string, unknown>, what: string, example: string, textOf: (texts: Texts) => string): void => {
    app.get(url, {
      schema: {
        ...schema,
        produces: ['application/yaml'],
        response: { 200: { type: 'string', maxLength: DOCUMENT_MAX_LENGTH, description: what, examples: [example] }, 503: yamlOverloadedResponse() }
      }
    }, async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(textOf(await documents.texts())))
  }

  serveJson('/openapi.json', {
    ...common,
    operationId: 'getOpenApiJson',
    summary: 'This document, as JSON',
    description: 'The OpenAPI 3.1 document of this deployment (its servers, limits and settings), without a key.'
  }, 'The OpenAPI 3.1 document.', example, ({ json }) => json)
  serveYaml('/openapi.yaml', {
    ...common,
    operationId: 'getOpenApiYaml',
    summary: 'This document, as YAML',
    description: 'The same document as YAML, written so that YAML 1.1 and 1.2 readers load the same values as from the JSON.'
  }, 'The OpenAPI 3.1 document.', `openapi: ${example.openapi}\ninfo:\n  title: ${example.info.title}\n  version: ${example.info.version}\n`, ({ yaml }) => yaml)

  const asyncApiExample = { asyncapi: '3.0.0', info: { title: 'Pet Store events', version: API_VERSION } }
  const asyncApi = {
    ...common,
    'x-stability': 'beta' as const,
    description: 'The AsyncAPI 3.0 document of the events (beta), without a key: the stream (`GET /v1/events` with `Accept: text/event-stream`) ' +
      'and webhooks as channels, each event type a message, its payload the schema this document gives it (`components.schemas`).'
  }

  serveJson('/asyncapi.json', { ...asyncApi, operationId: 'getAsyncApiJson', summary: 'The events, as AsyncAPI (JSON, beta)' },
    'The AsyncAPI 3.0 document.', asyncApiExample, ({ asyncApiJson }) => asyncApiJson)
  serveYaml('/asyncapi.yaml', { ...asyncApi, operationId: 'getAsyncApiYaml', summary: 'The events, as AsyncAPI (YAML, beta)' },
    'The AsyncAPI 3.0 document, as YAML.',
    `asyncapi: ${asyncApiExample.asyncapi}\ninfo:\n  title: ${asyncApiExample.info.title}\n  version: ${asyncApiExample.info.version}\n`, ({ asyncApiYaml }) => asyncApiYaml)

  for (const path of ['/openapi.json', '/openapi.yaml', '/asyncapi.json', '/asyncapi.yaml']) allowOnly(app, path, ['GET'])
}

export default openApiDocument
