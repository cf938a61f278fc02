import fp from 'fastify-plugin'
import apiReference from './api-reference.js'
import { registerOpenApi } from './openapi.js'
import openApiDocument from './openapi-document-routes.js'

/** The OpenAPI document's builder: registered before every route it describes, since it collects them as they are added. */
export const openApi = fp(async (app) => {
  await registerOpenApi(app, app.config)
}, { name: 'petstore-openapi', dependencies: ['petstore-http-foundation'] })

/** The document (`/v1/openapi.json`, `.yaml`) and the interactive reference (`/docs`), both without a key. */
export const docsRoutes = fp(async (app) => {
  await app.register(openApiDocument, { prefix: '/v1' })
  await app.register(apiReference)
}, { name: 'petstore-docs', dependencies: ['petstore-openapi'] })
