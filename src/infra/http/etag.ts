import { hash } from 'node:crypto'

/** A strong entity tag (RFC 9110 §8.8.3) for a serialized representation. */
export function strongEtag (payload: string | Buffer): string {
  // one-shot: it runs on every getPet
  return `"${hash('sha256', payload, 'base64url').slice(0, 27)}"`
}

/**
 * Whether `If-None-Match` matches `etag` (RFC 9110 §13.1.2): `*`, or any listed tag equal to it
 * under the weak comparison (a `W/` prefix on either side is ignored).
 */
export function ifNoneMatchMatches (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  const trimmed = header.trim()
  if (trimmed === '*') return true
  const opaque = etag.replace(/^W\//, '')
  for (const match of trimmed.matchAll(/(?:W\/)?("[^"]*")/g)) {
    if (match[1] === opaque) return true
  }
  return false
}

/**
 * Whether `If-Match` (well-formed: its schema checked it) matches the current `etag` of an existing
 * resource (RFC 9110 §13.1.1): `*`, or a listed tag equal to it under the strong comparison, so a
 * weak tag (`W/"…"`) never matches.
 */
export function ifMatchMatches (header: string, etag: string): boolean {
  const trimmed = header.trim()
  if (trimmed === '*') return true
  for (const match of trimmed.matchAll(/(W\/)?("[^"]*")/g)) {
    if (match[1] === undefined && match[2] === etag) return true
  }
  return false
}
