import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { allowOnly } from '../http/method-not-allowed.js'

/** The served OpenAPI document, as JSON and YAML, without authentication. */
const openApiDocument: FastifyPluginAsyncTypebox = async (app) => {
  const common = { tags: ['operations'], security: [] }

  app.get('/openapi.json', {
    schema: {
      ...common,
      operationId: 'getOpenApiJson',
      summary: 'This document, as JSON',
      response: { 200: { ...Type.Object({}, { additionalProperties: true }), description: 'The OpenAPI 3.1 document.' } }
    }
  }, async (_request, reply) => reply.type('application/json; charset=utf-8').serializer(JSON.stringify).send(app.swagger()))

  app.get('/openapi.yaml', {
    schema: {
      ...common,
      operationId: 'getOpenApiYaml',
      summary: 'This document, as YAML',
      produces: ['application/yaml'],
      response: { 200: { type: 'string', description: 'The OpenAPI 3.1 document.' } }
    }
  }, async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })))

  allowOnly(app, '/openapi.json', ['GET'])
  allowOnly(app, '/openapi.yaml', ['GET'])
}

export default openApiDocument
