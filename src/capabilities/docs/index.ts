/** The API's description: the OpenAPI document built from the routes' own schemas, served as JSON and YAML, and `/docs`. */
export { docsRoutes, openApi } from './docs-plugin.js'
export { API_LICENSE, API_VERSION } from './openapi.js'
export { DOCS_CSP, DOCS_PREFIX } from './api-reference.js'
