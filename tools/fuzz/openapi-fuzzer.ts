/**
 * Property-based fuzzing of the HTTP API, driven by the OpenAPI document the app serves.
 *
 * Every documented operation gets requests built from its parameters and request body:
 * valid ones and hostile ones (missing, garbled or foreign credentials; parameters out of
 * range, of the wrong type, repeated or malformed; wrong content types; malformed, truncated,
 * deeply nested or oversized JSON; huge and unusual Unicode; `__proto__`/`constructor` keys;
 * duplicate keys; extra fields). Each answer must be a status the document lists for the
 * operation, with a body valid against the document's schema for it; never a 5xx; and no
 * error body may carry a stack trace, SQL or a file path. Besides the document, a small model
 * of the catalogue (every pet this fuzzer created) predicts the exact answer where the
 * README's decisions fix it: 401 without a valid key, 400 for an invalid parameter or body,
 * the exact page a list returns, the pet a read returns, Idempotency-Key replays.
 *
 * Used by test/fuzz/openapi-fuzz.test.ts (seeded and short) and scripts/fuzz.ts (long runs).
 * The parts, by role:
 * - the document: `api-description.ts`; requests as generated: `fuzz-request.ts`
 * - generators: `header-generators.ts`, `body-generators.ts`, `request-generators.ts`
 * - oracles and model: `conformance-oracle.ts` (the document), `model-oracle.ts` with
 *   `catalogue-model.ts` (the README's decisions)
 * - runner: `api-fuzzer.ts` (sends, checks, walks), `wire-request.ts` (what goes on the wire),
 *   `properties.ts` (what fast-check runs)
 * - report: `fuzz-report.ts`
 */
export { ApiDescription, type ApiOperation } from './api-description.js'
export { describeRequest, type FuzzBody, type FuzzParam, type FuzzRequest, type ParamValue } from './fuzz-request.js'
export { bodyArbitrary, validValueArbitrary } from './body-generators.js'
export { requestArbitrary } from './request-generators.js'
export type { Pet } from './catalogue-model.js'
export { findLeaks } from './conformance-oracle.js'
export { FuzzFailure, FuzzStats } from './fuzz-report.js'
export { ApiFuzzer, type FuzzerOptions } from './api-fuzzer.js'
export {
  fuzzHostileRequests, fuzzValidCreates, fuzzValidUpdates, validCreateArbitrary, validUpdateArbitrary,
  type PropertyResult, type PropertyRun, type ValidCreate
} from './properties.js'
