import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { errorDefinition, type ErrorCode } from '../../src/infra/errors/catalogue.js'

/** Asserts an Error answer: the status of `code` in the catalogue, and exactly {code, message, status}. */
export function assertError (res: LightMyRequestResponse, code: ErrorCode, messageIncludes?: string, status: number = errorDefinition(code).status): { message: string } {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`)
  assert.match(String(res.headers['content-type']), /^application\/json/)
  const body = res.json()
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status'])
  assert.equal(body.code, code)
  assert.equal(body.status, status)
  assert.equal(typeof body.message, 'string')
  if (messageIncludes !== undefined) assert.ok(body.message.includes(messageIncludes), `message "${body.message}" should mention "${messageIncludes}"`)
  return body
}
