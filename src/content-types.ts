import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'
import { ApiError } from './errors.js'

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const
const UTF8 = new TextDecoder('utf-8', { fatal: true })

// strings (skipped whole, escapes included), number literals, and the colon that ends a key
const JSON_TOKENS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|:/g

/**
 * JSON.parse would turn `1.0000000000000001` or `9007199254740990.6` into an integer
 * silently. A number written with a fraction or exponent that parses to an integer is
 * refused, so an integer field never receives a rounded value.
 */
function findRoundedInteger (text: string): { literal: string, field: string | undefined } | undefined {
  let lastString: string | undefined
  let field: string | undefined
  for (const [token] of text.matchAll(JSON_TOKENS)) {
    if (token.startsWith('"')) {
      lastString = token
      field = undefined
    } else if (token === ':') {
      field = lastString === undefined ? undefined : JSON.parse(lastString) as string
    } else if (/[.eE]/.test(token) && Number.isInteger(Number(token))) {
      return { literal: token, field }
    } else {
      field = undefined
    }
  }
  return undefined
}

function parseJsonBody (body: Buffer): unknown {
  let text: string
  try {
    text = UTF8.decode(body)
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid UTF-8.')
  }
  if (text.trim() === '') throw new ApiError('invalid_request', 'body: a JSON object is required, but the body is empty')
  let value: unknown
  try {
    value = secureJson.parse(text, undefined, PARSE_OPTIONS)
  } catch (error) {
    const reason = (error as Error).message
    throw /forbidden prototype property/.test(reason)
      ? new ApiError('invalid_request', 'body: the keys "__proto__" and "constructor.prototype" are not allowed')
      : new ApiError('malformed_json', `The request body is not valid JSON: ${reason}`)
  }
  const rounded = findRoundedInteger(text)
  if (rounded !== undefined) {
    throw new ApiError('invalid_request', `body: ${rounded.field === undefined ? 'a number' : `field "${rounded.field}"`} must be an integer written without a fraction or exponent, got ${rounded.literal}`)
  }
  return value
}

/**
 * Accepts request bodies as UTF-8 JSON only (anything else is 415), and turns parse
 * failures into Error bodies that say what is wrong. `__proto__` and
 * `constructor.prototype` keys are refused rather than risk prototype pollution.
 */
export function acceptJsonBodiesOnly (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}
