import { Type, type Static } from '@sinclair/typebox'
import { ERROR_CODES, ERROR_MESSAGE_MAX_LENGTH, statusesOf, type ErrorCode } from '../errors/catalogue.js'

export const ErrorSchema = Type.Object({
  code: Type.Unsafe<ErrorCode>({
    type: 'string',
    enum: [...ERROR_CODES],
    description: 'Machine-readable error code, from a small stable set: ' + ERROR_CODES.map((code) => `\`${code}\` (${statusesOf(code).join(' or ')})`).join(', ') + '.'
  }),
  message: Type.String({
    minLength: 1,
    maxLength: ERROR_MESSAGE_MAX_LENGTH,
    description: `Human-readable description; for a 400 it names the field and what is wrong with it. At most ${ERROR_MESSAGE_MAX_LENGTH} characters.`
  }),
  status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599, description: 'The HTTP status code of the answer.' })
}, {
  $id: 'Error',
  additionalProperties: false,
  description: 'The body of every error answer.'
})
/** The body of every error answer. */
export type ErrorBody = Static<typeof ErrorSchema>
