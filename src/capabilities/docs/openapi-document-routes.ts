import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { stringify } from 'yaml'
import { allowOnly } from '../../infra/http/method-not-allowed.js'
import { stringifyJson } from '../../infra/json/exact-json.js'
import { overloadedResponse } from '../../infra/schemas/responses.js'
import { API_VERSION } from './openapi.js'

/** A bound on the document's size, in characters (it is about a tenth of it). */
export const DOCUMENT_MAX_LENGTH = 1_048_576

/** The served OpenAPI document, as JSON and YAML, without authentication. */
const openApiDocument: FastifyPluginAsyncTypebox = async (app) => {
  const common = { tags: ['operations'], security: [] }
  // written with YAML 1.1's types in mind, so that a string such as 2030-12-05 (a timestamp to a
  // YAML 1.1 reader) or "yes" is quoted, and every reader loads the same document as the JSON one
  let yaml: string | undefined
  // int64 bounds are bigints (2^63 − 1 is no double): written digit for digit, as the YAML library writes them too
  let json: string | undefined
  const example = { openapi: '3.1.0', info: { title: 'Pet Store', version: API_VERSION } }

  app.get('/openapi.json', {
    schema: {
      ...common,
      operationId: 'getOpenApiJson',
      summary: 'This document, as JSON',
      description: 'The OpenAPI 3.1 document of this deployment (its servers, limits and settings), without a key.',
      response: { 200: { ...Type.Object({}, { additionalProperties: true }), description: 'The OpenAPI 3.1 document.', examples: [example] }, 503: overloadedResponse() }
    }
  }, async (_request, reply) => {
    json ??= stringifyJson(app.swagger())
    return reply.type('application/json; charset=utf-8').send(json)
  })

  app.get('/openapi.yaml', {
    schema: {
      ...common,
      operationId: 'getOpenApiYaml',
      summary: 'This document, as YAML',
      description: 'The same document as YAML, written so that YAML 1.1 and 1.2 readers load the same values as from the JSON.',
      produces: ['application/yaml'],
      response: {
        200: { type: 'string', maxLength: DOCUMENT_MAX_LENGTH, description: 'The OpenAPI 3.1 document.', examples: [`openapi: ${example.openapi}\ninfo:\n  title: ${example.info.title}\n  version: ${example.info.version}\n`] },
        // the Error body is JSON, whatever the document's own type
        503: { description: overloadedResponse().description, headers: overloadedResponse().headers, content: { 'application/json': { schema: overloadedResponse(), examples: overloadedResponse()['x-examples'] } } }
      }
    }
  }, async (_request, reply) => {
    // imported with the module: @fastify/swagger loads the YAML library at start anyway, and the server's
    // bundle would give a dynamic import of it (CommonJS) no named exports
    yaml ??= stringify(app.swagger(), { schema: 'yaml-1.1' })
    return reply.type('application/yaml; charset=utf-8').send(yaml)
  })

  allowOnly(app, '/openapi.json', ['GET'])
  allowOnly(app, '/openapi.yaml', ['GET'])
}

export default openApiDocument
