/** The properties fast-check runs: hostile requests, valid creates and valid updates, each checked end to end. */
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import type { ApiDescription, Json } from './api-description.js'
import type { ApiFuzzer } from './api-fuzzer.js'
import { validValueArbitrary } from './body-generators.js'
import { stringifyJson } from '../../src/infra/json/exact-json.js'
import { canonical, readJson, type Pet } from './catalogue-model.js'
import { describeRequest, withToString, type FuzzParam, type FuzzRequest } from './fuzz-request.js'
import { FuzzFailure, type FuzzStats } from './fuzz-report.js'
import { JSON_CONTENT_TYPES, VALID_AUTHORIZATIONS } from './header-generators.js'
import { requestArbitrary } from './request-generators.js'

export interface PropertyRun {
  numRuns: number
  seed: number
  /** fast-check's replay path, to reproduce one failure directly. */
  path?: string
}

export interface PropertyResult {
  failed: boolean
  /** fast-check's report: seed, counterexample (the shrunk request), the error. */
  report: string
  cases: number
}

async function runProperty<T> (arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, run: PropertyRun, stats: FuzzStats): Promise<PropertyResult> {
  const details = await fc.check(fc.asyncProperty(arbitrary, async (value) => {
    stats.cases++
    await predicate(value)
  }), { seed: run.seed, numRuns: run.numRuns, ...(run.path === undefined ? {} : { path: run.path }), endOnFailure: false, includeErrorInReport: true })
  return { failed: details.failed, report: details.failed ? fc.defaultReportMessage(details) ?? 'failed' : '', cases: stats.cases }
}

/** Hostile (and some valid) requests to every operation; every answer checked. */
export async function fuzzHostileRequests (fuzzer: ApiFuzzer, run: PropertyRun): Promise<PropertyResult> {
  return runProperty(requestArbitrary(fuzzer.api), async (request) => { await fuzzer.send(request) }, run, fuzzer.stats)
}

export interface ValidCreate {
  request: FuzzRequest
  /** Send the create twice with one Idempotency-Key: the second must replay the first. */
  repeat: boolean
}

/** Valid creates only, each with a unique Idempotency-Key or none, and valid but varied spellings. */
export function validCreateArbitrary (api: ApiDescription): fc.Arbitrary<ValidCreate> {
  const operation = api.operation('createPet')
  const value = validValueArbitrary(api, operation.bodyPointer ?? '', operation.bodySchema ?? {}) as fc.Arbitrary<Record<string, Json>>
  let counter = 0
  return fc.record({
    pet: value,
    pretty: fc.boolean(),
    authorization: fc.constantFrom(...VALID_AUTHORIZATIONS),
    contentType: fc.constantFrom(...JSON_CONTENT_TYPES),
    idempotent: fc.boolean(),
    repeat: fc.boolean()
  }).map(({ pet, pretty, authorization, contentType, idempotent, repeat }) => ({
    repeat: idempotent && repeat,
    request: withToString({
      operation: operation.id,
      // unique per generated value, so that shrinking never reuses one by accident
      params: idempotent ? [{ in: 'header', name: 'idempotency-key', value: { kind: 'text', text: `fuzz-${Date.now().toString(36)}-${counter++}` } }] : [],
      authorization,
      contentType,
      body: { label: 'valid', text: stringifyJson(pet, pretty ? 2 : undefined), structured: true, wholeIntegers: true },
      contentLengthDelta: 0,
      headers: []
    })
  }))
}

/**
 * Valid creates: each is 201 with the pet asked for, readable at once (200, then 304 with its ETag),
 * and listed exactly as created (walking the status-filtered list from where the last walk ended).
 */
export async function fuzzValidCreates (fuzzer: ApiFuzzer, run: PropertyRun): Promise<PropertyResult> {
  const getPet = fuzzer.api.operation('getPet')
  // pets are appended at the end, so a walk can resume at the last page the previous walk read
  const resumeAt = new Map<string, string>()
  return runProperty(validCreateArbitrary(fuzzer.api), async ({ request, repeat }) => {
    const res = await fuzzer.send(request)
    if (res.statusCode !== 201) throw new FuzzFailure([`a valid create answered ${res.statusCode}`], describeRequest(request), res)
    const pet = readJson<Pet>(res)
    if (repeat) {
      const again = await fuzzer.send(request)
      if (again.statusCode !== 201 || again.headers['idempotent-replayed'] !== 'true' || again.body !== res.body) {
        throw new FuzzFailure(['a repeat with the same Idempotency-Key and body did not replay the first answer'], describeRequest(request), again)
      }
    }
    const id = { in: 'path', name: 'petId', value: { kind: 'text', text: String(pet.id) } } as const
    const read = await fuzzer.send({ operation: getPet.id, params: [id], authorization: 'Bearer {key}', contentType: undefined, body: undefined, contentLengthDelta: 0, headers: [] })
    const etag = read.headers.etag
    if (typeof etag !== 'string') throw new FuzzFailure(['getPet answered without an ETag'], `GET /v1/pets/${pet.id}`, read)
    const revalidated = await fuzzer.send({ operation: getPet.id, params: [id, { in: 'header', name: 'if-none-match', value: { kind: 'text', text: etag } }], authorization: 'Bearer {key}', contentType: undefined, body: undefined, contentLengthDelta: 0, headers: [] })
    if (revalidated.statusCode !== 304) throw new FuzzFailure([`If-None-Match with the pet's own ETag answered ${revalidated.statusCode}`], `GET /v1/pets/${pet.id}`, revalidated)
    let lastPage: string | undefined
    const listed = await fuzzer.walk(resumeAt.get(pet.status) ?? `?limit=100&status=${pet.status}`, (url) => { lastPage = url.slice(url.indexOf('?')) })
    if (lastPage !== undefined) resumeAt.set(pet.status, lastPage)
    const found = listed.filter((other) => other.id === pet.id)
    if (found.length !== 1 || !isDeepStrictEqual(canonical(found[0]), canonical(pet))) {
      throw new FuzzFailure([`the pet is listed ${found.length} times in the status=${pet.status} list${found.length === 1 ? `, as ${stringifyJson(found[0])}` : ''}`], describeRequest(request), res)
    }
  }, run, fuzzer.stats)
}

/** Valid patches of existing pets (the status among all three, so every transition and refusal comes up), half of them with the pet's current tag in `If-Match`. */
export function validUpdateArbitrary (api: ApiDescription): fc.Arbitrary<FuzzRequest> {
  const operation = api.operation('updatePet')
  const patch = validValueArbitrary(api, operation.bodyPointer ?? '', operation.bodySchema ?? {})
  return fc.record({
    patch,
    pet: fc.nat(),
    conditional: fc.boolean(),
    authorization: fc.constantFrom(...VALID_AUTHORIZATIONS),
    contentType: fc.constantFrom(...operation.bodyMediaTypes)
  }).map(({ patch, pet, conditional, authorization, contentType }) => withToString({
    operation: operation.id,
    params: [
      { in: 'path', name: 'petId', value: { kind: 'pet', index: pet } },
      ...(conditional ? [{ in: 'header', name: 'if-match', value: { kind: 'etag', of: 'target', weak: false } } satisfies FuzzParam] : [])
    ],
    authorization,
    contentType,
    body: { label: 'valid', text: stringifyJson(patch), structured: true, wholeIntegers: true },
    contentLengthDelta: 0,
    headers: []
  }))
}

/**
 * Valid patches: each is 200 or 409 as the lifecycle says (the model checks the pet answered and that
 * getPet reads it at once with the same tag), and after each change the lists of the old and the new
 * status are exactly the model's.
 */
export async function fuzzValidUpdates (fuzzer: ApiFuzzer, run: PropertyRun): Promise<PropertyResult> {
  return runProperty(validUpdateArbitrary(fuzzer.api), async (request) => {
    const before = new Map([...fuzzer.pets].map(([id, pet]) => [id, pet.status]))
    const res = await fuzzer.send(request)
    if (res.statusCode !== 200 && res.statusCode !== 409) throw new FuzzFailure([`a valid patch of an existing pet answered ${res.statusCode}`], describeRequest(request), res)
    if (res.statusCode !== 200) return
    const pet = readJson<Pet>(res)
    for (const status of new Set([before.get(pet.id), pet.status])) {
      const listed = await fuzzer.walk(`?limit=100&status=${String(status)}`)
      const expected = [...fuzzer.pets.values()].filter((other) => other.status === status).sort((a, b) => a.id - b.id)
      if (!isDeepStrictEqual(canonical(listed), canonical(expected))) {
        throw new FuzzFailure([`after the change, the status=${String(status)} list is ${JSON.stringify(listed.map((p) => p.id))}, expected ${JSON.stringify(expected.map((p) => p.id))}`], describeRequest(request), res)
      }
    }
  }, run, fuzzer.stats)
}
