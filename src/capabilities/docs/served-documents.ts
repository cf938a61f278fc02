import type { FastifyInstance } from 'fastify'
import jsYaml from 'js-yaml'
import { stringifyJson } from '../../infra/json/exact-json.js'

/** The texts the docs capability serves, each written once. */
export interface DocumentTexts {
  /** `/v1/openapi.json` */
  readonly json: string
  /** `/v1/openapi.yaml` */
  readonly yaml: string
  /** The page's own copy (`/docs/json`): its servers and paths as {@link pageDocumentOf} gives them. */
  readonly pageJson: string
  /** `/docs/yaml` */
  readonly pageYaml: string
  /** `/v1/asyncapi.json`: the events, as {@link ServedDocuments}' `asyncApiOf` makes them of the OpenAPI document. */
  readonly asyncApiJson: string
  /** `/v1/asyncapi.yaml` */
  readonly asyncApiYaml: string
}

/** Makes a document from the OpenAPI document (the page's copy, the AsyncAPI document). */
export type DocumentOf = (document: Readonly<Record<string, unknown>>) => Record<string, unknown>

// int64 bounds are bigints (2^63 − 1 is no double): written digit for digit and untagged, as plain integers
const BIGINT = new jsYaml.Type('tag:petstore,2026:bigint', {
  kind: 'scalar',
  resolve: () => false,
  predicate: (value: unknown) => typeof value === 'bigint',
  // only bigints reach it (the predicate above)
  represent: (value: object) => (value as unknown as bigint).toString()
})
const YAML_SCHEMA = jsYaml.DEFAULT_SCHEMA.extend({ implicit: [BIGINT] })

/**
 * The document as YAML. js-yaml quotes every string that a YAML 1.1 reader would take for another type
 * (`yes`, `on`, a date such as 2030-12-05) as well as what YAML 1.2 would, so every reader loads the
 * same values as from the JSON. It writes this document in about 30 ms where the `yaml` package took 700.
 */
export function yamlOf (document: unknown): string {
  return jsYaml.dump(document, { schema: YAML_SCHEMA, noRefs: true, lineWidth: -1, quotingType: '"' })
}

/**
 * The served documents, built once per app: by {@link ServedDocuments.prepare} right after the server
 * listens (one step a turn, so a request that arrives meanwhile waits at most one step), or by the first
 * request that comes before. Building them took 0.35–0.75 s of one turn (the `yaml` package most of it);
 * a request that paid for it held every other request up, and the load shedder took that for overload.
 */
export class ServedDocuments {
  readonly #app: FastifyInstance
  readonly #pageDocumentOf: DocumentOf
  readonly #asyncApiOf: DocumentOf
  #texts: Promise<DocumentTexts> | undefined

  constructor (app: FastifyInstance, pageDocumentOf: DocumentOf, asyncApiOf: DocumentOf) {
    this.#app = app
    this.#pageDocumentOf = pageDocumentOf
    this.#asyncApiOf = asyncApiOf
  }

  /** The texts; built on the first call. */
  async texts (): Promise<DocumentTexts> {
    this.#texts ??= this.#build().catch((error: unknown) => {
      this.#texts = undefined
      throw error
    })
    return this.#texts
  }

  async #build (): Promise<DocumentTexts> {
    const document = await turn(() => this.#app.swagger() as unknown as Record<string, unknown>)
    const json = await turn(() => stringifyJson(document))
    const yaml = await turn(() => yamlOf(document))
    const page = await turn(() => this.#pageDocumentOf(document))
    const pageJson = await turn(() => stringifyJson(page))
    const pageYaml = await turn(() => yamlOf(page))
    const asyncApi = await turn(() => this.#asyncApiOf(document))
    const asyncApiJson = await turn(() => stringifyJson(asyncApi))
    const asyncApiYaml = await turn(() => yamlOf(asyncApi))
    return { json, yaml, pageJson, pageYaml, asyncApiJson, asyncApiYaml }
  }
}

/** `work` in a turn of its own, after the I/O that is waiting. */
async function turn<T> (work: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(work())
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
      }
    })
  })
}
