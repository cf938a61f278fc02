import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ApiError, declareErrors, ERROR_CODES, errorDefinition, ERRORS, statusesOf, type ErrorCode } from '../../../src/infra/errors/catalogue.js'
import { buildTestApp } from '../../helpers/build-app.js'

// A capability declares its own codes beside its routes (declareErrors, at its module's load); the one catalogue holds
// them from then on, so the Error schema built with an app, the document and ApiError know them as the shared ones.
// This file declares one as a capability would, after every module of the app was loaded.
const DECLARED = declareErrors({ widget_jammed: { status: 409, message: 'The widget is jammed.', alsoStatuses: [422] } })
const JAMMED = 'widget_jammed' as ErrorCode

test('When a capability declares an error code, then the Error schema of an app built after lists it with its statuses, after the shared ones', async (t) => {
  const { app } = await buildTestApp(t)
  const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  const code = document.components.schemas.Error.properties.code

  assert.deepEqual(code.enum, [...Object.keys(ERRORS), ...code.enum.slice(Object.keys(ERRORS).length)])
  assert.equal(code.enum.at(-1), 'widget_jammed')
  assert.deepEqual(code.enum, [...ERROR_CODES])
  assert.match(code.description, /`widget_jammed` \(409 or 422\)\.$/)
  assert.match(document.info.description, /`widget_jammed`/)
})

test('When an ApiError carries a declared code, then it has the code\'s status and message, as a shared one does', () => {
  const error = new ApiError(JAMMED)
  assert.deepEqual([error.status, error.message], [409, DECLARED.widget_jammed.message])
  assert.equal(new ApiError(JAMMED, 'jammed again', {}, 422).status, 422)
  assert.deepEqual(statusesOf(JAMMED), [409, 422])
  assert.equal(errorDefinition(JAMMED), DECLARED.widget_jammed)
  assert.throws(() => new ApiError(JAMMED, undefined, {}, 404), /widget_jammed is never a 404/)
})

test('When a code is declared twice, or an undeclared one is used, then it is refused by name', () => {
  assert.throws(() => declareErrors({ widget_jammed: { status: 404, message: 'again' } }), /error code widget_jammed is declared twice/)
  assert.throws(() => declareErrors({ not_found: { status: 404, message: 'again' } }), /error code not_found is declared twice/)
  assert.throws(() => errorDefinition('widget_lost' as ErrorCode), /error code widget_lost is not in the catalogue/)
})
