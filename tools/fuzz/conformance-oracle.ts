/** The oracle of the document: what it promises about any answer (documented status, schema, no leaks). */
import type { LightMyRequestResponse } from 'fastify'
import { parseJson } from '../../src/infra/json/exact-json.js'
import { pointerToken, type ApiDescription, type ApiOperation } from './api-description.js'
import { shorten } from './fuzz-request.js'

// what must never reach a client in an error body
const LEAK_PATTERNS: Array<[string, RegExp]> = [
  ['a stack frame', /\bat\s+(?:\S+\s+\()?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/],
  ['a file path', /\/(?:work|home|root|usr|opt|srv|app|tmp|var|etc|proc)\/[\w.-]+|node_modules|[A-Za-z]:\\\w|\bfile:\/\/|\bnode:internal/],
  ['a source location', /\b[\w-]+\.(?:ts|js|mjs|cjs)(?::\d+|\b)/],
  ['SQL', /\b(?:SELECT\s[\s\S]+?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX)|ON\s+CONFLICT|RETURNING\s+\w)/i],
  ['a database error', /SQLITE_\w+|\bsqlite\b|better-sqlite3|\bpostgres(?:ql)?\b|\bpg_\w+|\brelation\s+"|syntax error at or near|violates\s[\w ]*constraint|duplicate key value|\bSQLSTATE\b|\bECONNREFUSED\b|\bENOENT\b/i],
  ['an exception', /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|AssertionError|Error):|Maximum call stack|\bundefined is not|Cannot read propert|is not a function|\bFST_[A-Z_]+|\bERR_[A-Z_]{3,}|\bajv\b/]
]

/** The leaks in an error body; text the request itself carried (echoed back) does not count. */
export function findLeaks (body: string, requestText: string): string[] {
  const found: string[] = []
  const echoed = requestText.toLowerCase()
  for (const [what, pattern] of LEAK_PATTERNS) {
    for (const match of body.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g'))) {
      if (!echoed.includes(match[0].toLowerCase())) found.push(`${what}: ${JSON.stringify(match[0])}`)
    }
  }
  return found
}

/** What the document promises about any answer of `operation`. */
export function checkConformance (api: ApiDescription, operation: ApiOperation, res: LightMyRequestResponse, echoable: string): string[] {
  const problems: string[] = []
  const status = res.statusCode
  const documented = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default
  // 501 is a deliberate answer (an operation documented as not implemented); any other 5xx is a fault
  if (status >= 500 && !(status === 501 && operation.responses['501'] !== undefined)) problems.push(`answered ${status}: a server error`)
  if (documented === undefined) {
    problems.push(`status ${status} is not documented for ${operation.id} (documented: ${Object.keys(operation.responses).join(', ')})`)
    return problems
  }
  const key = operation.responses[String(status)] !== undefined ? String(status) : operation.responses[`${String(status)[0]}XX`] !== undefined ? `${String(status)[0]}XX` : 'default'
  const mediaTypes = Object.keys(documented.content ?? {})
  if (mediaTypes.length === 0) {
    if (res.rawPayload.length > 0) problems.push(`a ${status} is documented without a body, but one came: ${shorten(res.body)}`)
  } else {
    const contentType = String(res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
    const mediaType = mediaTypes.find((type) => type.toLowerCase() === contentType)
    if (mediaType === undefined) {
      problems.push(`Content-Type ${JSON.stringify(res.headers['content-type'])} is not one documented for ${status} (${mediaTypes.join(', ')})`)
    } else {
      const pointer = `${operation.pointer}/responses/${key}/content/${pointerToken(mediaType)}/schema`
      let body: unknown = res.body
      let parsed = true
      if (mediaType.includes('json')) {
        try {
          // exactly: an int64 beyond 2^53 is checked against its bounds as the value sent, not a rounded one
          body = parseJson(res.body)
        } catch {
          parsed = false
          problems.push('the body is not JSON')
        }
      }
      const invalid = parsed ? api.validate(pointer, body) : undefined
      if (invalid !== undefined) problems.push(`the ${status} body does not match its documented schema: ${invalid}`)
      if (parsed && status >= 400 && body !== null && typeof body === 'object' && 'status' in body && body.status !== status) {
        problems.push(`the Error body says status ${String(body.status)} but the answer is ${status}`)
      }
      const code = parsed && status >= 400 && body !== null && typeof body === 'object' && 'code' in body ? String(body.code) : undefined
      const codeStatus = code === undefined ? undefined : api.errorCodeStatuses.get(code)
      if (codeStatus !== undefined && codeStatus !== status) problems.push(`code ${code} is documented as ${codeStatus}, but the answer is ${status}`)
    }
  }
  if (status >= 400) {
    for (const leak of findLeaks(res.body, echoable)) problems.push(`the error body leaks ${leak}`)
  }
  if (res.headers['x-request-id'] === undefined) problems.push('no X-Request-Id')
  return problems
}
