/** Generators of Authorization and Content-Type headers: valid, near misses and hostile ones. */
import fc from 'fast-check'

/** Authorization headers that carry the valid key, in spellings RFC 6750 allows. */
export const VALID_AUTHORIZATIONS = ['Bearer {key}', 'bearer {key}', 'BEARER {key}', 'Bearer   {key}', 'Bearer {key} ']
const HOSTILE_AUTHORIZATIONS = [
  '', '   ', 'Bearer', 'Bearer ', 'Bearer  ', 'Basic dXNlcjpwYXNz', 'Basic {key}', 'Token {key}', '{key}', 'Bearer {key}x',
  'Bearer {key}{key}', 'Bearer "{key}"', 'Bearer {key},Bearer {key}', 'Bearer {key}, Bearer {key}', 'Bearer\t{key}', 'Bearer {key}=',
  'Bearer =', 'Bearer petstore_', 'Bearer null', 'Bearer undefined', 'Bearer \u00ff\u00fe', 'Bearer {key}\u00e9', 'Digest username="a"',
  'Negotiate YIIB', 'Bearer:{key}', 'Bearer={key}', `Bearer ${'A'.repeat(8000)}`, 'Bearer ../../etc/passwd', "Bearer ' OR '1'='1"
]
// RFC 6750 b64token characters, and printable Latin-1 (what an HTTP header value can carry)
const B64TOKEN = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=']
/** Printable Latin-1 characters: what an HTTP header value can carry. */
export const LATIN1 = Array.from({ length: 0xff - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i)).filter((c) => c !== '\x7f')

// keys one step from the valid one: `{key-1}` is the key without its last character, `{KEY}` the key in upper case
const NEAR_MISS_AUTHORIZATIONS = ['Bearer {key}x', 'Bearer {key-1}', 'Bearer {KEY}', 'Bearer {key}=', 'Bearer x{key}', 'Bearer {key-1}A', 'Bearer {key}.', 'Bearer {key}/']

/** Authorization headers: mostly the valid key, sometimes none, a near miss or garbage. */
export function authorizationArbitrary (): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...VALID_AUTHORIZATIONS) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_AUTHORIZATIONS) },
    { weight: 3, arbitrary: fc.constantFrom(...NEAR_MISS_AUTHORIZATIONS) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...B64TOKEN), minLength: 1, maxLength: 60 }).map((token) => `Bearer ${token}`) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...LATIN1), maxLength: 60 }) }
  )
}

/** The JSON content types every body accepts. */
export const JSON_CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8']
const OTHER_CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream',
  'application/jsonx', 'application/json-patch+json', 'application/vnd.api+json', 'application/problem+json', 'APPLICATION/JSON',
  'application/JSON;charset=UTF-8', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json;',
  ' application/json', 'json', '*/*', '', 'application/json, text/plain', 'text/json', 'application/json; charset="utf-8"'
]

/** Content types for a body documented in `mediaTypes`: mostly those (and JSON), sometimes none or another. */
export function contentTypeArbitrary (mediaTypes: readonly string[]): fc.Arbitrary<string | undefined> {
  const documented = mediaTypes.filter((type) => type !== 'application/json').flatMap((type) => [type, `${type}; charset=utf-8`])
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...JSON_CONTENT_TYPES, ...documented) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom(...OTHER_CONTENT_TYPES) }
  )
}
