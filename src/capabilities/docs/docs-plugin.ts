import fp from 'fastify-plugin'
import apiReference, { pageDocumentOf, ReferencePage } from './api-reference.js'
import { asyncApiDocument } from './asyncapi.js'
import { registerOpenApi } from './openapi.js'
import openApiDocument from './openapi-document-routes.js'
import { ServedDocuments } from './served-documents.js'

/** The OpenAPI document's builder: registered before every route it describes, since it collects them as they are added. */
export const openApi = fp(async (app) => {
  await registerOpenApi(app, app.config)
}, { name: 'petstore-openapi', dependencies: ['petstore-http-foundation'] })

/**
 * The documents (`/v1/openapi.json`, `.yaml`; the events' `/v1/asyncapi.json`, `.yaml`) and the interactive
 * reference (`/docs`), all without a key. Each is built by the first request for it (the documents together, in
 * steps of a turn each, about 0.2 s; the page with @fastify/swagger-ui loaded then, about 0.3 s), not at start:
 * built at the listen, they held 16 MB of an instance that nobody asked them of (docs/performance.md).
 */
export const docsRoutes = fp(async (app) => {
  const context = { config: app.config, eventTypes: app.eventTypes }
  const documents = new ServedDocuments(app, pageDocumentOf, (openApi) => {
    const components = openApi.components as { schemas?: Record<string, unknown> } | undefined
    return asyncApiDocument(context, app.eventChannels.list, components?.schemas ?? {})
  })
  const page = new ReferencePage(app, documents)
  await app.register(openApiDocument, { prefix: '/v1', documents })
  await app.register(apiReference, { page })
}, { name: 'petstore-docs', dependencies: ['petstore-openapi', 'petstore-load-shedding'] })
