/**
 * The credentials the service issues and accepts: RFC 6750 bearer tokens and the `petstore_` keys it
 * generates. One definition for the keys capability, which issues and checks them, and for the logger
 * and the config, which must recognise them without depending on it.
 */

/** Prefix of generated keys, so a leaked key is recognisable in a scan. */
export const API_KEY_PREFIX = 'petstore_'

/** Random bytes of a generated key: 256 bits, written as 43 base64url characters. */
export const API_KEY_RANDOM_BYTES = 32

/** A key this service issued, wherever it appears in a text (a URL, a log line). */
export const ISSUED_API_KEY = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9_-]{${Math.ceil(API_KEY_RANDOM_BYTES * 4 / 3)}}`, 'g')

// RFC 6750 section 2.1: b64token, what a bearer credential may be made of
export const B64TOKEN = '[A-Za-z0-9\\-._~+/]+=*'

/** A whole value that can be sent as a bearer token (what `PETSTORE_API_KEYS` entries must be). */
export const BEARER_TOKEN = new RegExp(`^${B64TOKEN}$`)

/** The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3), before any `error` attribute. */
export const BEARER_CHALLENGE = 'Bearer realm="petstore"'

/** The `WWW-Authenticate` challenge of a 403 for a key whose role may not call the operation (RFC 6750 §3.1). */
export const INSUFFICIENT_SCOPE_CHALLENGE = `${BEARER_CHALLENGE}, error="insufficient_scope"`
