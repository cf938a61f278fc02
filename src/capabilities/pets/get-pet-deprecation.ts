import type { HeaderSpec } from '../../infra/schemas/responses.js'

/** When `getPet` was deprecated (RFC 9745 `Deprecation: @<unix time>`). */
export const GET_PET_DEPRECATED_AT = new Date('2026-11-21T00:00:00Z')
/** When `getPet` stops working and answers 410 Gone (RFC 8594 `Sunset`). */
export const GET_PET_SUNSET_AT = new Date('2030-12-05T00:00:00Z')
/** The sunset as the document's `x-deprecated-sunset` writes it (YYYY-MM-DD). */
export const GET_PET_SUNSET_DATE = GET_PET_SUNSET_AT.toISOString().slice(0, 10)
// not toLocaleDateString: loading ICU's date formats costs every process start-up time, for one sentence
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

/** The sunset in prose: "5 December 2030". */
export const GET_PET_SUNSET_PROSE = `${GET_PET_SUNSET_AT.getUTCDate()} ${MONTHS[GET_PET_SUNSET_AT.getUTCMonth()] ?? ''} ${GET_PET_SUNSET_AT.getUTCFullYear()}`

/** The headers every `getPet` answer carries, besides its successor link. */
export const GET_PET_HEADERS = {
  deprecation: `@${GET_PET_DEPRECATED_AT.getTime() / 1000}`,
  sunset: GET_PET_SUNSET_AT.toUTCString()
} as const

export const DEPRECATION_HEADER_SPECS: Record<string, HeaderSpec> = {
  Deprecation: { type: 'string', description: 'RFC 9745: when this operation was deprecated, as `@<unix time>`.', enum: [GET_PET_HEADERS.deprecation], example: GET_PET_HEADERS.deprecation },
  Sunset: { type: 'string', description: 'RFC 8594: when this operation is removed; from then on it answers 410.', enum: [GET_PET_HEADERS.sunset], example: GET_PET_HEADERS.sunset },
  Link: {
    type: 'string',
    description: 'The successor: `<…/v1/pets>; rel="successor-version"`.',
    pattern: '^<[^>]+/pets>; rel="successor-version"$',
    maxLength: 1000,
    example: '<https://api.petstore.test/v1/pets>; rel="successor-version"'
  }
}
