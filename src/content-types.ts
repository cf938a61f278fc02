import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'
import { ApiError } from './errors.js'

const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const

/**
 * Accepts request bodies as JSON only (anything else is 415), and turns parse
 * failures into Error bodies that say what is wrong. `__proto__` and
 * `constructor.prototype` keys are refused rather than risk prototype pollution.
 */
export function acceptJsonBodiesOnly (app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string
    if (text.trim() === '') {
      done(new ApiError('invalid_request', 'body: a JSON object is required, but the body is empty'), undefined)
      return
    }
    try {
      done(null, secureJson.parse(text, undefined, PARSE_OPTIONS))
    } catch (error) {
      const reason = (error as Error).message
      done(/forbidden prototype property/.test(reason)
        ? new ApiError('invalid_request', 'body: the keys "__proto__" and "constructor.prototype" are not allowed')
        : new ApiError('malformed_json', `The request body is not valid JSON: ${reason}`), undefined)
    }
  })
}
