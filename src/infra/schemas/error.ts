import { Type, type TObject, type TInteger, type TString, type TUnsafe } from '@sinclair/typebox'
import { ERROR_CODES, ERROR_MESSAGE_MAX_LENGTH, statusesOf, type ErrorCode } from '../errors/catalogue.js'

/** The `$id` of the Error schema, by which every error answer refers to it. */
export const ERROR_SCHEMA_ID = 'Error'

type ErrorSchemaType = TObject<{ code: TUnsafe<ErrorCode>, message: TString, status: TInteger }>

/**
 * The body of every error answer, its `code` one of the catalogue's: built when an app is built (after every
 * capability's module declared its codes), so the enum and its prose hold them all.
 */
export function errorSchema (): ErrorSchemaType {
  return Type.Object({
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
    $id: ERROR_SCHEMA_ID,
    additionalProperties: false,
    description: 'The body of every error answer.'
  })
}

/** The body of every error answer. */
export interface ErrorBody {
  code: ErrorCode
  message: string
  status: number
}
