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
 * reference (`/docs`), all without a key. All of it is built in the background as soon as the server listens,
 * so no request pays for it.
 */
export const docsRoutes = fp(async (app) => {
  const context = { config: app.config, eventTypes: app.eventTypes }
  const documents = new ServedDocuments(app, pageDocumentOf, (openApi) => {
    const components = openApi.components as { schemas?: Record<string, unknown> } | undefined
    return asyncApiDocument(context, components?.schemas ?? {})
  })
  const page = new ReferencePage(app, documents)
  await app.register(openApiDocument, { prefix: '/v1', documents })
  await app.register(apiReference, { page })
  app.addHook('onListen', (done) => {
    // after the listen, not before it: the first requests are not kept waiting for pages nobody asked for yet
    const prepared = page.prepare().catch((error: unknown) => { app.log.error({ err: error }, 'the API documents could not be built; the first request for one builds it') })
    app.ignoreLoadDuring(prepared)
    done()
  })
}, { name: 'petstore-docs', dependencies: ['petstore-openapi', 'petstore-load-shedding'] })
