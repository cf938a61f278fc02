/** The runner: sends generated requests to one app, checks each answer with both oracles, and walks the catalogue. */
import { isDeepStrictEqual } from 'node:util'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ApiDescription, type ApiOperation } from './api-description.js'
import { canonical, CatalogueModel, nextLink, readJson, type Pet } from './catalogue-model.js'
import { checkConformance } from './conformance-oracle.js'
import type { FuzzRequest } from './fuzz-request.js'
import { FuzzFailure, FuzzStats } from './fuzz-report.js'
import { ModelOracle } from './model-oracle.js'
import { resolveRequest } from './wire-request.js'

/** How {@link ApiFuzzer.create} prepares the catalogue. */
export interface FuzzerOptions {
  /** Pets created before fuzzing, so that ids, cursors and ETags can refer to something. */
  seedPets?: number
}

/**
 * Sends generated requests to one app and checks every answer against the document and a model
 * of the catalogue. The app must be used by nothing else while it runs (the model would drift).
 */
export class ApiFuzzer {
  readonly app: FastifyInstance
  readonly api: ApiDescription
  readonly stats = new FuzzStats()
  readonly #model = new CatalogueModel()
  readonly #oracle: ModelOracle
  readonly #key: string

  constructor (app: FastifyInstance, api: ApiDescription, key: string) {
    this.app = app
    this.api = api
    this.#key = key
    this.#oracle = new ModelOracle(app, api, this.#model, key)
  }

  /** Every pet created through this fuzzer, by id, as its 201 (or its last 200) returned it. */
  get pets (): Map<number, Pet> {
    return this.#model.pets
  }

  static async create (app: FastifyInstance, key: string, options: FuzzerOptions = {}): Promise<ApiFuzzer> {
    const fuzzer = new ApiFuzzer(app, await ApiDescription.load(app), key)
    const statuses = ['available', 'pending', 'sold']
    for (let i = 0; i < (options.seedPets ?? 6); i++) {
      await fuzzer.send({
        operation: 'createPet',
        params: [],
        authorization: 'Bearer {key}',
        contentType: 'application/json',
        body: { label: 'seed', text: JSON.stringify({ name: `Seed ${i}`, categoryId: i, status: statuses[i % 3] }), structured: true, wholeIntegers: true },
        contentLengthDelta: 0,
        headers: []
      })
    }
    return fuzzer
  }

  get authHeader (): { authorization: string } {
    return { authorization: `Bearer ${this.#key}` }
  }

  /** The cursor of the `next` link of a one-pet page (with `status`), as a client would follow it. */
  async #issuedCursor (status: string | undefined): Promise<string | undefined> {
    const operation = this.api.operation('listPets')
    const res = await this.app.inject({ method: 'GET', url: `${operation.basePath}/pets?limit=1${status === undefined ? '' : `&status=${status}`}`, headers: this.authHeader })
    const next = nextLink(res)
    return next === undefined ? undefined : new URL(next, 'http://x').searchParams.get('cursor') ?? undefined
  }

  async #etagOf (id: number): Promise<string | undefined> {
    const operation = this.api.operation('getPet')
    const res = await this.app.inject({ method: 'GET', url: `${operation.basePath}/pets/${id}`, headers: this.authHeader })
    const etag = res.headers.etag
    return typeof etag === 'string' ? etag : undefined
  }

  /** Sends one request and checks its answer; throws a {@link FuzzFailure} naming every problem. */
  async send (request: FuzzRequest): Promise<LightMyRequestResponse> {
    const operation = this.api.operation(request.operation)
    const sent = await resolveRequest(request, operation, {
      key: this.#key,
      pets: this.#model.sortedPets(),
      issuedCursor: async (status) => await this.#issuedCursor(status),
      etagOf: async (id) => await this.#etagOf(id)
    })
    let res: LightMyRequestResponse
    try {
      res = await this.app.inject({ method: sent.method as 'GET', url: sent.url, headers: sent.headers, ...(sent.payload === undefined ? {} : { payload: sent.payload }) })
    } catch (error) {
      throw new FuzzFailure([`the request could not be sent: ${String(error)}`], sent.display, undefined)
    }
    this.stats.count(operation.id, res.statusCode)
    const problems = this.checkConformance(operation, res, sent.echoable)
    if (problems.length === 0) problems.push(...await this.#oracle.check(request, operation, sent, res))
    if (problems.length > 0) throw new FuzzFailure(problems, sent.display, res)
    return res
  }

  /** What the document promises about any answer of `operation`. */
  checkConformance (operation: ApiOperation, res: LightMyRequestResponse, echoable: string): string[] {
    return checkConformance(this.api, operation, res, echoable)
  }

  /** Every pet of the catalogue, by following `next` links from the first page of `query`; checks each page. */
  async walk (query: string, onPage?: (url: string) => void): Promise<Pet[]> {
    const operation = this.api.operation('listPets')
    const pets: Pet[] = []
    let url: string | undefined = `${operation.basePath}/pets${query}`
    for (let pages = 0; url !== undefined; pages++) {
      if (pages > 100_000) throw new Error('the next links do not end')
      onPage?.(url)
      const res = await this.app.inject({ method: 'GET', url, headers: this.authHeader })
      this.stats.count(operation.id, res.statusCode)
      const problems = this.checkConformance(operation, res, url)
      if (res.statusCode !== 200) problems.push(`a list page answered ${res.statusCode}`)
      if (problems.length > 0) throw new FuzzFailure(problems, `GET ${url}`, res)
      pets.push(...readJson<Pet[]>(res))
      const next = nextLink(res)
      url = next === undefined ? undefined : new URL(next).pathname + new URL(next).search
    }
    return pets
  }

  /** The whole catalogue, walked page by page, must be exactly the pets created, each once, in id order. */
  async verifyCatalogue (limit = 37): Promise<void> {
    const listed = await this.walk(`?limit=${limit}`)
    const expected = this.#model.sortedPets()
    if (!isDeepStrictEqual(canonical(listed), canonical(expected))) {
      const listedIds = listed.map((pet) => pet.id)
      const missing = expected.filter((pet) => !listedIds.includes(pet.id)).map((pet) => pet.id)
      throw new FuzzFailure([`walking the list (limit=${limit}) did not return exactly the ${expected.length} pets created: ${listed.length} listed, missing ids ${JSON.stringify(missing.slice(0, 20))}`], `GET /v1/pets?limit=${limit} and its next links`, undefined)
    }
  }
}
