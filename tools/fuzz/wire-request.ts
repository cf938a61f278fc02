/** Turns a generated request into what is sent: symbolic values resolved, every value percent-encoded as generated. */
import { KEY_PLACEHOLDER, shorten, type FuzzRequest } from './fuzz-request.js'
import type { ApiOperation } from './api-description.js'
import type { Pet } from './catalogue-model.js'

/** The state a request's symbolic values are resolved against. */
export interface ResolveContext {
  key: string
  /** The pets of the model, in id order. */
  pets: Pet[]
  /** The cursor of a list page's `next` link (with `status`), undefined when the list has one page. */
  issuedCursor: (status: string | undefined) => Promise<string | undefined>
  /** The ETag getPet answers for the pet. */
  etagOf: (id: number) => Promise<string | undefined>
}

/** Every byte as %XX except the unreserved characters: a value reaches the server exactly as generated. */
function percentEncode (text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const character = String.fromCharCode(byte)
    out += /[A-Za-z0-9_~-]/.test(character) ? character : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const MAX_PARAM_LENGTH = 1000

/** A request as it goes on the wire, with what the oracle needs to know about it. */
export interface Sent {
  method: string
  url: string
  headers: Record<string, string>
  payload: string | Buffer | undefined
  /** The body bytes as they reach the server. */
  bytes: Buffer | undefined
  /** What a parameter holds once decoded by the server (for query, every value of the name). */
  values: Map<string, string[]>
  /** The cursor's status filter when a cursor was resolved, for checking it against `status`. */
  cursorStatus: string | undefined | null
  cursorTampered: boolean
  /** A Content-Length header that differs from the body's length. */
  lengthMismatch: boolean
  /** The pet id the If-None-Match or If-Match ETag belongs to (resolved etags only). */
  etagOf: number | undefined
  /** A path parameter that cannot be routed (bad percent-encoding, over the router's length). */
  unroutable: boolean
  /** Text the request carried, for telling an echo from a leak. */
  echoable: string
  display: string
}

/** Resolves the symbolic parts of a request (existing ids, issued cursors, ETags) into what is sent. */
export async function resolveRequest (request: FuzzRequest, operation: ApiOperation, context: ResolveContext): Promise<Sent> {
  const pets = context.pets
  const values = new Map<string, string[]>()
  const echo: string[] = []
  let path = operation.basePath + operation.path
  const query: string[] = []
  const headers: Record<string, string> = {}
  let cursorStatus: string | undefined | null = null
  let cursorTampered = false
  let etagOf: number | undefined
  let unroutable = false
  const targetId = (): number | undefined => {
    const value = values.get('path:petId')?.[0]
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined
  }
  // path parameters first: an ETag refers to the pet the path names
  const ordered = [...request.params].sort((a, b) => Number(b.in === 'path') - Number(a.in === 'path'))
  for (const param of ordered) {
    let decoded: string
    let encoded: string
    switch (param.value.kind) {
      case 'text':
        decoded = param.value.text
        encoded = percentEncode(decoded)
        break
      case 'raw':
        decoded = param.value.text
        encoded = param.value.text
        break
      case 'pet': {
        const pet = pets[param.value.index % Math.max(pets.length, 1)]
        decoded = String(pet?.id ?? 1)
        encoded = decoded
        break
      }
      case 'cursor': {
        const cursor = await context.issuedCursor(param.value.status)
        decoded = cursor === undefined ? 'no-cursor-was-issued' : param.value.tamper === 'flip' ? (cursor.startsWith('A') ? 'B' : 'A') + cursor.slice(1) : param.value.tamper === 'suffix' ? `${cursor}.x` : cursor
        encoded = percentEncode(decoded)
        cursorStatus = cursor === undefined ? null : param.value.status
        cursorTampered = cursor === undefined || param.value.tamper !== 'none'
        break
      }
      case 'etag': {
        const target = targetId()
        const pet = param.value.of === 'target' ? pets.find((p) => p.id === target) : pets.find((p) => p.id !== target)
        const etag = pet === undefined ? undefined : await context.etagOf(pet.id)
        decoded = etag === undefined ? '"none"' : (param.value.weak ? 'W/' : '') + etag
        encoded = decoded
        etagOf = etag === undefined ? undefined : pet?.id
        break
      }
    }
    echo.push(param.name, decoded, encoded)
    const key = `${param.in}:${param.name}`
    values.set(key, [...(values.get(key) ?? []), decoded])
    if (param.in === 'path') {
      if (param.value.kind === 'raw' || encoded.length > MAX_PARAM_LENGTH) unroutable = true
      path = path.replace(`{${param.name}}`, encoded)
    } else if (param.in === 'query') {
      query.push(`${percentEncode(param.name)}=${encoded}`)
    } else if (param.in === 'header') {
      headers[param.name.toLowerCase()] = decoded
    }
  }
  if (request.authorization !== undefined) {
    headers.authorization = request.authorization.split(KEY_PLACEHOLDER).join(context.key)
      .split('{key-1}').join(context.key.slice(0, -1)).split('{KEY}').join(context.key.toUpperCase())
  }
  if (request.contentType !== undefined) headers['content-type'] = request.contentType
  for (const [name, value] of request.headers) {
    headers[name] = value
    echo.push(value)
  }
  let payload: string | Buffer | undefined
  let bytes: Buffer | undefined
  let lengthMismatch = false
  if (request.body !== undefined) {
    payload = 'text' in request.body ? request.body.text : Buffer.from(request.body.bytes)
    bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8')
    echo.push(bytes.toString('utf8'))
    if (request.contentLengthDelta !== 0) {
      const declared = Math.max(0, bytes.length + request.contentLengthDelta)
      headers['content-length'] = String(declared)
      lengthMismatch = declared !== bytes.length
    }
  }
  // what a client can put on the wire: text beyond Latin-1 travels as its UTF-8 bytes
  for (const [name, value] of Object.entries(headers)) {
    if ([...value].some((character) => character.charCodeAt(0) > 0xff)) headers[name] = Buffer.from(value, 'utf8').toString('latin1')
  }
  if (headers['transfer-encoding'] !== undefined && payload === undefined) delete headers['transfer-encoding']
  const url = query.length === 0 ? path : `${path}?${query.join('&')}`
  echo.push(url, decodeSafely(url), headers.authorization ?? '')
  const display = [
    `${operation.method} ${url.length > 600 ? `${url.slice(0, 600)}…(${url.length} chars)` : url}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${name === 'authorization' ? value.split(context.key).join('<valid key>').split(context.key.slice(0, -1)).join('<valid key minus its last character>').split(context.key.toUpperCase()).join('<valid key in upper case>') : shorten(value, 200).slice(1, -1)}`),
    ...(bytes === undefined ? [] : [`body (${bytes.length} bytes): ${shorten(bytes.toString('utf8'), 600)}`])
  ].join('\n')
  return { method: operation.method, url, headers, payload, bytes, values, cursorStatus, cursorTampered, lengthMismatch, etagOf, unroutable, echoable: echo.join('\n'), display }
}

function decodeSafely (url: string): string {
  try {
    return decodeURIComponent(url)
  } catch {
    return url
  }
}
