import { Type, type Static } from '@sinclair/typebox'
import { ERROR_CODES, ERRORS, type ErrorCode } from '../errors/catalogue.js'

export const ErrorSchema = Type.Object({
  code: Type.Unsafe<ErrorCode>({
    type: 'string',
    enum: [...ERROR_CODES],
    description: 'Machine-readable error code, from a small stable set: ' + ERROR_CODES.map((code) => `\`${code}\` (${ERRORS[code].status})`).join(', ') + '.'
  }),
  message: Type.String({ description: 'Human-readable description; for a 400 it names the field and what is wrong with it.' }),
  status: Type.Integer({ description: 'The HTTP status code of the answer.' })
}, {
  $id: 'Error',
  additionalProperties: false,
  description: 'The body of every error answer.'
})
/** The body of every error answer. */
export type ErrorBody = Static<typeof ErrorSchema>
