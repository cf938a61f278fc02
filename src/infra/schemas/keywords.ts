/**
 * The schema keyword that says, in words, what a `pattern` allows ("must be …"). The schema that
 * has the pattern carries it, so a 400 names the problem without guessing which pattern failed.
 * Validation registers it as an annotation; OpenAPI shows it as a vendor extension.
 */
export const PATTERN_DESCRIPTION_KEYWORD = 'x-pattern-description'

/**
 * The schema keyword that names the value the service uses for an optional field a request leaves
 * out. JSON Schema's `default` would say the same, but client generators (openapi-typescript's
 * default `defaultNonNullable`) read it as "always present" and make the field required in the
 * request type (docs/api-decisions.md). Validation registers it as an annotation; nothing fills it
 * in but the route.
 */
export const DEFAULT_VALUE_KEYWORD = 'x-default'

/**
 * The schema keyword that marks an addition not yet stable (`beta`, `experimental`), on an operation or
 * on a field added to a stable shape. Validation and serialization register it as an annotation.
 */
export const STABILITY_KEYWORD = 'x-stability'
