/**
 * The schema keyword that says, in words, what a `pattern` allows ("must be …"). The schema that
 * has the pattern carries it, so a 400 names the problem without guessing which pattern failed.
 * Validation registers it as an annotation; OpenAPI shows it as a vendor extension.
 */
export const PATTERN_DESCRIPTION_KEYWORD = 'x-pattern-description'
