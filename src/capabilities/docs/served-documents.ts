import type { FastifyInstance } from 'fastify'
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

/**
 * The served documents, built once per app by the first request for one of them, one step a turn (a request that
 * arrives meanwhile waits at most one step), the load shedder told that the turns they take are no load.
 * Building them took 0.35–0.75 s of one turn with the `yaml` package; about 0.2 s in steps now.
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
    if (this.#texts === undefined) {
      this.#texts = this.#build().catch((error: unknown) => {
        this.#texts = undefined
        throw error
      })
      this.#app.ignoreLoadDuring(this.#texts)
    }
    return this.#texts
  }

  async #build (): Promise<DocumentTexts> {
    // the YAML writer with the documents: an instance that serves none never loads it
    const { yamlOf } = await import('./yaml-writer.js')
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
