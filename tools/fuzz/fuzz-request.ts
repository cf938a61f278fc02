/**
 * Requests as the generators make them: symbolic where they name state (an existing pet, an
 * issued cursor, an ETag), resolved only when sent.
 */
import fc from 'fast-check'

/** A parameter value: text (percent-encoded into the URL), raw URL text, or something resolved when sent. */
export type ParamValue =
  | { kind: 'text', text: string }
  | { kind: 'raw', text: string }
  | { kind: 'pet', index: number }
  | { kind: 'cursor', status: string | undefined, tamper: 'none' | 'flip' | 'suffix' }
  | { kind: 'etag', of: 'target' | 'other', weak: boolean }

export interface FuzzParam { in: string, name: string, value: ParamValue }

export type FuzzBody =
  | { label: string, text: string, structured: boolean, wholeIntegers: boolean }
  | { label: string, bytes: number[] }

export interface FuzzRequest {
  operation: string
  params: FuzzParam[]
  /** The Authorization header; `{key}` stands for the valid key. Undefined: no header. */
  authorization: string | undefined
  contentType: string | undefined
  body: FuzzBody | undefined
  /** Added to the true Content-Length (0: Node's own). */
  contentLengthDelta: number
  headers: Array<[string, string]>
}

/** Stands for the valid key in a generated Authorization header. */
export const KEY_PLACEHOLDER = '{key}'

/** `text` as a JSON string, cut after `max` characters. */
export function shorten (text: string, max = 160): string {
  const visible = JSON.stringify(text)
  return visible.length <= max ? visible : `${visible.slice(0, max)}…(${text.length} chars)`
}

function describeParamValue (value: ParamValue): string {
  switch (value.kind) {
    case 'text': return shorten(value.text)
    case 'raw': return `raw ${shorten(value.text)}`
    case 'pet': return `<id of existing pet #${value.index}>`
    case 'cursor': return `<cursor of a list${value.status === undefined ? '' : ` with status=${value.status}`}${value.tamper === 'none' ? '' : `, tampered (${value.tamper})`}>`
    case 'etag': return `<${value.weak ? 'weak ' : ''}ETag of ${value.of === 'target' ? 'the pet asked for' : 'another pet'}>`
  }
}

/** A readable one-screen description of a generated request (fast-check prints it for a counterexample). */
export function describeRequest (request: FuzzRequest): string {
  const lines = [`${request.operation}:`]
  for (const param of request.params) lines.push(`  ${param.in} ${JSON.stringify(param.name)} = ${describeParamValue(param.value)}`)
  lines.push(`  Authorization: ${request.authorization === undefined ? '(none)' : JSON.stringify(request.authorization).split(KEY_PLACEHOLDER).join('<valid key>').split('{key-1}').join('<valid key minus its last character>').split('{KEY}').join('<valid key in upper case>')}`)
  if (request.contentType !== undefined) lines.push(`  Content-Type: ${JSON.stringify(request.contentType)}`)
  for (const [name, value] of request.headers) lines.push(`  ${name}: ${shorten(value)}`)
  if (request.contentLengthDelta !== 0) lines.push(`  Content-Length: true length ${request.contentLengthDelta > 0 ? '+' : ''}${request.contentLengthDelta}`)
  if (request.body !== undefined) {
    lines.push('text' in request.body
      ? `  body (${request.body.label}): ${shorten(request.body.text, 400)}`
      : `  body (${request.body.label}): bytes ${Buffer.from(request.body.bytes).toString('hex').slice(0, 400)}`)
  }
  return lines.join('\n')
}

/** The request, printed by fast-check as {@link describeRequest} words it. */
export function withToString (request: FuzzRequest): FuzzRequest {
  Object.defineProperty(request, fc.toStringMethod, { value: () => describeRequest(request), enumerable: false })
  return request
}
