/** The oracle of the README's decisions: the exact answer a request must get, predicted from the model of the catalogue. */
import { isDeepStrictEqual } from 'node:util'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { ApiDescription, ApiOperation } from './api-description.js'
import { parseJson, stringifyJson } from '../../src/infra/json/exact-json.js'
import { canonical, exactInteger, fingerprint, nextLink, parseIdempotencyKeyHeader, readJson, STATUS_MOVES, type CatalogueModel, type Pet } from './catalogue-model.js'
import { shorten, type FuzzRequest } from './fuzz-request.js'
import type { Sent } from './wire-request.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true })
const BODY_LIMIT_BYTES = 16 * 1024
type AuthClass = 'valid' | 'missing' | 'malformed' | 'unknown'
// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token, the scheme name case-insensitive
const BEARER_CREDENTIALS = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** Judges answers against the model; creates and updates it records in the model, and reads each back from the app. */
export class ModelOracle {
  readonly #app: FastifyInstance
  readonly #api: ApiDescription
  readonly #model: CatalogueModel
  readonly #key: string

  constructor (app: FastifyInstance, api: ApiDescription, model: CatalogueModel, key: string) {
    this.#app = app
    this.#api = api
    this.#model = model
    this.#key = key
  }

  get #authHeader (): { authorization: string } {
    return { authorization: `Bearer ${this.#key}` }
  }

  /** What the README's decisions and the model of the catalogue say this answer must be. */
  async check (request: FuzzRequest, operation: ApiOperation, sent: Sent, res: LightMyRequestResponse): Promise<string[]> {
    const problems: string[] = []
    const status = res.statusCode
    const expect = (allowed: number[], why: string): void => {
      if (!allowed.includes(status)) problems.push(`expected ${allowed.join(' or ')} (${why}), got ${status}`)
    }
    if (operation.public) {
      expect([200], 'a public operation')
      return problems
    }
    if (sent.unroutable) {
      // the URL cannot be decoded or routed: refused before any route (or its authentication) runs, so
      // without the route's own headers (getPet's Deprecation/Sunset); a 400 of the document all the same
      expect([400], 'the path does not decode, or a parameter is over the router\'s length limit')
      return problems
    }
    const auth = this.#authClass(sent.headers.authorization)
    if (auth !== 'valid') {
      expect([401], `authentication comes first, and the key is ${auth}`)
      const challenge = String(res.headers['www-authenticate'] ?? '')
      const expected = auth === 'missing' ? 'Bearer realm="petstore"' : `Bearer realm="petstore", error="${auth === 'malformed' ? 'invalid_request' : 'invalid_token'}"`
      if (status === 401 && challenge !== expected) problems.push(`WWW-Authenticate is ${JSON.stringify(challenge)}, expected ${JSON.stringify(expected)}`)
      return problems
    }
    if (operation.parameters.some((parameter) => parameter.in === 'path' && operation.path.endsWith(`{${parameter.name}}`) && sent.values.get(`path:${parameter.name}`)?.[0] === '')) {
      // an empty last path parameter leaves the path ending in "/", which no route serves (before any parameter is looked at);
      // an empty one inside the path (`/webhook-endpoints//test`) is routed, and refused by the route as any bad value is
      expect([404], 'the path ends in "/"')
      return problems
    }
    const unknown = this.#unknownQueryParameter(operation, sent)
    if (unknown !== undefined) {
      // query validation comes after the body is parsed and validated: a body that fails first decides the answer, and a
      // valid body under a content type a server may read either way (unsure) may still be refused as it is read (415)
      const verdict = operation.bodySchema === undefined ? undefined : this.#judgeBody(request, operation, sent)
      // an operation that takes no body (a webhook endpoint's rotate, test, delete) still judges one that is declared or sent, before the query
      const unasked = operation.bodySchema === undefined && (sent.headers['content-type'] !== undefined || (sent.bytes?.length ?? 0) > 0)
      const statuses = verdict?.kind === 'expect' ? verdict.statuses : verdict?.kind === 'unsure' || unasked ? [400, 413, 415] : [400]
      expect(statuses, `query parameter ${JSON.stringify(shorten(unknown, 40))} is not documented`)
      return problems
    }
    switch (operation.id) {
      case 'placeOrder':
      case 'updateOrder':
        this.#followOrder(res)
        break
      case 'listPets':
        this.#checkList(operation, sent, res, expect, problems)
        break
      case 'getPet':
        this.#checkGet(operation, sent, res, expect, problems)
        break
      case 'createPet':
        await this.#checkCreate(request, operation, sent, res, expect, problems)
        break
      case 'updatePet':
        await this.#checkUpdate(request, operation, sent, res, expect, problems)
        break
      case 'listEvents':
        this.#checkEvents(operation, sent, res, expect, problems)
        break
    }
    return problems
  }

  /** The feed: valid parameters are a 200 page in id order, after `after`, of the asked type, with a next link after its last event. */
  #checkEvents (operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): void {
    const invalid = this.#parameterProblem(operation, sent)
    if (invalid !== undefined) return expect([400], invalid)
    // nothing is deleted by retention during a fuzzing run: a valid page is always served
    expect([200], 'valid parameters')
    if (res.statusCode !== 200) return
    const events = readJson<Array<{ id: number, type: string }>>(res)
    const after = Number(sent.values.get('query:after')?.[0] ?? 0)
    const type = sent.values.get('query:type')?.[0]
    const limitSchema = this.#api.resolve(operation.parameters.find((p) => p.name === 'limit')?.schema ?? {})
    const limit = Number(sent.values.get('query:limit')?.[0] ?? limitSchema.default)
    if (events.length > limit) problems.push(`${events.length} events on a page of limit ${limit}`)
    if (events.some((event, i) => event.id <= (i === 0 ? after : (events[i - 1] as { id: number }).id))) problems.push('events not in increasing id order after `after`')
    if (type !== undefined && events.some((event) => event.type !== type)) problems.push(`an event of another type than ${type}`)
    const next = nextLink(res)
    const expectedAfter = String(events.at(-1)?.id ?? after)
    if (next === undefined || new URL(next).searchParams.get('after') !== expectedAfter) problems.push(`the next link ${String(next)} does not continue after ${expectedAfter}`)
  }

  #authClass (header: string | undefined): AuthClass {
    if (header === undefined || header.trim() === '') return 'missing'
    const match = BEARER_CREDENTIALS.exec(header)
    if (match === null) return 'malformed'
    return match[1] === this.#key ? 'valid' : 'unknown'
  }

  /** A query parameter sent that the operation does not document (which it must refuse). */
  #unknownQueryParameter (operation: ApiOperation, sent: Sent): string | undefined {
    const documented = new Set(operation.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name))
    for (const key of sent.values.keys()) {
      if (key.startsWith('query:') && !documented.has(key.slice('query:'.length))) return key.slice('query:'.length)
    }
    return undefined
  }

  /** Whether the decoded query, path and header parameters are valid against their schemas (integers in plain decimal). */
  #parameterProblem (operation: ApiOperation, sent: Sent): string | undefined {
    for (const parameter of operation.parameters) {
      if (parameter.in !== 'query' && parameter.in !== 'path' && parameter.in !== 'header') continue
      const given = sent.values.get(`${parameter.in}:${parameter.name}`) ?? []
      if (given.length === 0) {
        if (parameter.required === true) return `${parameter.name} is missing`
        continue
      }
      if (given.length > 1) return `${parameter.name} is repeated`
      const text = given[0] as string
      const schema = this.#api.resolve(parameter.schema ?? {})
      const value = schema.type === 'integer' ? (/^-?\d+$/.test(text) ? exactInteger(text) : text) : text
      if (!this.#api.validateValue(schema, value)) return `${parameter.name}=${shorten(text, 40)} is invalid`
    }
    return undefined
  }

  #checkList (operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): void {
    const invalid = this.#parameterProblem(operation, sent)
    if (invalid !== undefined) return expect([400], invalid)
    const status = sent.values.get('query:status')?.[0]
    const hasCursor = sent.values.has('query:cursor')
    if (hasCursor && sent.cursorStatus === null) return expect([400], 'the cursor was not issued by the service')
    if (hasCursor && sent.cursorTampered) return expect([400], 'the cursor was altered')
    if (hasCursor && sent.cursorStatus !== status) return expect([400], 'the cursor belongs to another status filter')
    expect([200], 'valid parameters')
    if (res.statusCode !== 200) return
    const limitSchema = this.#api.resolve(operation.parameters.find((p) => p.name === 'limit')?.schema ?? {})
    const limit = Number(sent.values.get('query:limit')?.[0] ?? limitSchema.default)
    const matching = this.#model.sortedPets().filter((pet) => status === undefined || pet.status === status)
    // a resolved cursor comes from the next link of a one-pet page: the page after the first matching pet
    const start = hasCursor ? 1 : 0
    const expected = matching.slice(start, start + limit)
    if (!isDeepStrictEqual(canonical(readJson(res)), canonical(expected))) {
      problems.push(`the page is not the ${limit} pets expected after ${start} (ids ${JSON.stringify(expected.map((p) => p.id))}, got ${JSON.stringify(readJson<Pet[]>(res).map((p) => p.id))})`)
    }
    const more = matching.length > start + limit
    if (more !== (nextLink(res) !== undefined)) problems.push(more ? 'more pets match but there is no next link' : 'a next link on the last page')
  }

  #checkGet (operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): void {
    for (const header of ['deprecation', 'sunset', 'link']) {
      if (res.headers[header] === undefined) problems.push(`getPet answered without ${header}`)
    }
    const invalid = this.#parameterProblem(operation, sent)
    if (invalid !== undefined) return expect([400], invalid)
    const id = exactInteger(sent.values.get('path:petId')?.[0] ?? '')
    const pet = typeof id === 'number' ? this.#model.pets.get(id) : undefined
    if (pet === undefined) return expect([404], `no pet has id ${id}`)
    const ifNoneMatch = sent.headers['if-none-match']
    if (ifNoneMatch === undefined) expect([200], 'the pet exists')
    else if (ifNoneMatch.trim() === '*' || sent.etagOf === id) expect([304], 'If-None-Match matches')
    else if (sent.etagOf !== undefined) expect([200], 'If-None-Match is another pet\'s ETag')
    else expect([200, 304], 'If-None-Match is present')
    if (res.statusCode === 200 && !isDeepStrictEqual(canonical(readJson(res)), canonical(pet))) {
      problems.push(`the pet read differs from the pet created: ${stringifyJson(pet)}`)
    }
  }

  async #checkCreate (request: FuzzRequest, operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): Promise<void> {
    const verdict = this.#judgeBody(request, operation, sent)
    const idempotencyHeader = sent.headers['idempotency-key']
    const idempotencyKey = idempotencyHeader === undefined ? undefined : parseIdempotencyKeyHeader(idempotencyHeader)
    if (verdict.kind === 'expect') {
      expect(verdict.statuses, verdict.why)
    } else if (verdict.kind === 'valid') {
      if (idempotencyKey === null) {
        expect([400], 'the Idempotency-Key is malformed')
      } else if (idempotencyKey === undefined) {
        expect([201], 'a valid pet')
      } else {
        const earlier = this.#model.idempotency.get(idempotencyKey)
        if (earlier === undefined) expect([201], 'a valid pet with a new Idempotency-Key')
        else if (earlier.fingerprint === fingerprint(verdict.pet)) expect([201], 'a repeat of an earlier create with the same Idempotency-Key')
        else expect([422], 'the Idempotency-Key was used with another body')
      }
    }
    if (res.statusCode !== 201) return
    const pet = readJson<Pet>(res)
    const replayed = res.headers['idempotent-replayed'] === 'true'
    if (idempotencyKey === null) problems.push('a 201 despite a malformed Idempotency-Key')
    if (res.headers.location !== `${operation.basePath}/pets/${pet.id}`) problems.push(`Location is ${JSON.stringify(res.headers.location)}`)
    if (verdict.kind !== 'valid' && verdict.kind !== 'unsure') return
    if (verdict.kind === 'unsure' && verdict.pet === undefined) {
      problems.push('a 201 for a body that is not a valid NewPet')
      return
    }
    const asked = verdict.pet as Record<string, unknown>
    const earlier = idempotencyKey === undefined || idempotencyKey === null ? undefined : this.#model.idempotency.get(idempotencyKey)
    if (replayed) {
      if (earlier === undefined) problems.push('Idempotent-Replayed on a first use of the key')
      else if (earlier.fingerprint !== fingerprint(asked)) problems.push(`a replay for another body (the key was first used for ${stringifyJson(earlier.pet)})`)
      else if (!isDeepStrictEqual(canonical(pet), canonical(earlier.pet))) problems.push(`the replay differs from the first answer ${stringifyJson(earlier.pet)}`)
      return
    }
    if (earlier !== undefined) problems.push('a repeat with the same Idempotency-Key created a new pet')
    const expected = { ...asked, id: pet.id, status: asked.status ?? 'available' }
    if (!isDeepStrictEqual(canonical(pet), canonical(expected))) problems.push(`the created pet is not what was asked for: expected ${stringifyJson(expected)}`)
    if (this.#model.pets.has(pet.id)) problems.push(`id ${pet.id} was given twice`)
    this.#model.pets.set(pet.id, pet)
    if (idempotencyKey !== undefined && idempotencyKey !== null) this.#model.idempotency.set(idempotencyKey, { fingerprint: fingerprint(asked), pet })
    // readable at once, exactly as created
    const read = await this.#app.inject({ method: 'GET', url: `${operation.basePath}/pets/${pet.id}`, headers: this.#authHeader })
    if (read.statusCode !== 200 || !isDeepStrictEqual(canonical(readJson(read)), canonical(pet))) {
      problems.push(`GET ${operation.basePath}/pets/${pet.id} answered ${read.statusCode} ${shorten(read.body)} instead of the created pet`)
    }
  }

  async #checkUpdate (request: FuzzRequest, operation: ApiOperation, sent: Sent, res: LightMyRequestResponse, expect: (allowed: number[], why: string) => void, problems: string[]): Promise<void> {
    const verdict = this.#judgeBody(request, operation, sent)
    const invalid = this.#parameterProblem(operation, sent)
    // the body is refused as it is read (415, 413, not JSON) before anything else, or as it is validated (400, as a bad id or If-Match is)
    if (verdict.kind === 'expect') return expect(invalid === undefined ? verdict.statuses : [...new Set([...verdict.statuses, 400])], verdict.why)
    if (invalid !== undefined) return expect(verdict.kind === 'unsure' ? [400, 415] : [400], invalid)
    const id = exactInteger(sent.values.get('path:petId')?.[0] ?? '')
    const pet = typeof id === 'number' ? this.#model.pets.get(id) : undefined
    const patch = (verdict.pet ?? {}) as Partial<Pet>
    const ifMatch = sent.headers['if-match']
    // the only tags that can match are `*` and the pet's own, resolved from getPet just before (a W/ one never: strong comparison)
    const matches = ifMatch === undefined || ifMatch.trim() === '*' || (sent.etagOf === id && !ifMatch.trim().startsWith('W/'))
    let statuses = [200]
    let why = 'a valid patch of an existing pet'
    if (pet === undefined) [statuses, why] = [[404], `no pet has id ${id}`]
    else if (!matches) [statuses, why] = [[412], 'If-Match does not hold the pet\'s current tag']
    else if (patch.status !== undefined && patch.status !== pet.status && this.#model.hasOpenOrder(pet.id)) [statuses, why] = [[409], 'the pet has an open order']
    else if (patch.status !== undefined && patch.status !== pet.status && STATUS_MOVES[pet.status]?.includes(patch.status) !== true) [statuses, why] = [[409], `${pet.status} cannot become ${patch.status}`]
    expect(verdict.kind === 'unsure' ? [...statuses, 400, 415] : statuses, why)
    if (res.statusCode !== 200 || pet === undefined) return
    const updated = readJson<Pet>(res)
    const expected: Pet = { id: pet.id, name: patch.name ?? pet.name, categoryId: patch.categoryId ?? pet.categoryId, status: patch.status ?? pet.status }
    if (!isDeepStrictEqual(canonical(updated), canonical(expected))) problems.push(`the pet is not the one patched: expected ${stringifyJson(expected)}`)
    this.#model.pets.set(pet.id, updated)
    // readable at once, with the tag the change answered
    const read = await this.#app.inject({ method: 'GET', url: `${operation.basePath}/pets/${id}`, headers: this.#authHeader })
    if (read.statusCode !== 200 || !isDeepStrictEqual(canonical(readJson(read)), canonical(updated)) || read.headers.etag !== res.headers.etag) {
      problems.push(`GET ${operation.basePath}/pets/${id} answered ${read.statusCode} ${shorten(read.body)} (ETag ${String(read.headers.etag)}) instead of the patched pet with ETag ${String(res.headers.etag)}`)
    }
  }

  /** An order placed or moved moves its pet (placed: pending; delivered: sold; cancelled: available): the model follows. */
  #followOrder (res: LightMyRequestResponse): void {
    if (res.statusCode !== 200 && res.statusCode !== 201) return
    const order = readJson<{ id: number, petId: number, status: string }>(res)
    this.#model.orders.set(order.id, { petId: order.petId, status: order.status })
    const pet = this.#model.pets.get(order.petId)
    const petStatus = order.status === 'delivered' ? 'sold' : order.status === 'cancelled' ? 'available' : 'pending'
    if (pet !== undefined) this.#model.pets.set(pet.id, { ...pet, status: petStatus })
  }

  /** What a create must answer, judged from the body and content type alone (the key is valid). */
  #judgeBody (request: FuzzRequest, operation: ApiOperation, sent: Sent):
    { kind: 'expect', statuses: number[], why: string } | { kind: 'valid', pet: Record<string, unknown> } | { kind: 'unsure', pet: Record<string, unknown> | undefined } {
    const contentType = classifyContentType(sent.headers['content-type'], operation.bodyMediaTypes)
    const bytes = sent.bytes
    if (sent.lengthMismatch) {
      // a declared length over the limit is refused (413) before the body is read
      const withinLimit = Math.max(bytes?.length ?? 0, Number(sent.headers['content-length'] ?? 0)) <= BODY_LIMIT_BYTES
      return { kind: 'expect', statuses: contentType === 'json' && withinLimit ? [400] : [400, 413, 415], why: 'Content-Length does not match the body' }
    }
    if (contentType === 'other' || (contentType === 'none' && bytes !== undefined && bytes.length > 0)) {
      return { kind: 'expect', statuses: bytes === undefined || bytes.length === 0 ? [400, 415] : [413, 415], why: 'the body is not application/json' }
    }
    if (bytes === undefined || bytes.length === 0) return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: 'no body (a chunked empty body counts as one of no type)' }
    if (bytes.length > BODY_LIMIT_BYTES) return { kind: 'expect', statuses: contentType === 'json' ? [413] : [413, 415], why: `the body has ${bytes.length} bytes` }
    let text: string
    try {
      text = UTF8.decode(bytes)
    } catch {
      return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: 'the body is not UTF-8' }
    }
    let value: unknown
    try {
      // exactly, as the API promises to read int64 values
      value = parseJson(text.replace(/^\ufeff/, ''))
    } catch {
      return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: 'the body is not JSON' }
    }
    const invalid = this.#api.validate(operation.bodyPointer ?? '', value)
    if (invalid !== undefined) return { kind: 'expect', statuses: contentType === 'json' ? [400] : [400, 415], why: `the body is not a valid NewPet: ${invalid}` }
    const body = request.body
    const certain = contentType === 'json' && body !== undefined && 'text' in body && body.structured
    if (certain && !body.wholeIntegers) return { kind: 'expect', statuses: [400], why: 'an integer is written with a fractional part that parsing would round away' }
    return certain ? { kind: 'valid', pet: value as Record<string, unknown> } : { kind: 'unsure', pet: value as Record<string, unknown> }
  }
}

/** `json`: certainly one of the body's documented JSON types in UTF-8; `other`: certainly not; `unsure`: a server may read it either way. */
function classifyContentType (header: string | undefined, mediaTypes: readonly string[]): 'json' | 'other' | 'none' | 'unsure' {
  if (header === undefined) return 'none'
  if (header.includes(',') || header.startsWith(' ')) return 'unsure'
  const [essence = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase())
  if (!mediaTypes.includes(essence)) return 'other'
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length)
  return charset === undefined || charset === 'utf-8' ? 'json' : 'unsure'
}
