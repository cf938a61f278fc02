import { Type, type TUnsafe } from '@sinclair/typebox'
import { STABILITY_KEYWORD } from '../../infra/schemas/keywords.js'

/** Most keys an order's metadata holds (Stripe's limit). */
export const METADATA_MAX_KEYS = 50
/** Longest metadata key, in characters. */
export const METADATA_KEY_MAX_LENGTH = 40
/** Longest metadata value, in characters. */
export const METADATA_VALUE_MAX_LENGTH = 500

/** An order's metadata: string keys with string values. */
export type Metadata = Record<string, string>
/** A merge patch of metadata: a value sets its key, `null` removes it. */
export type MetadataPatch = Record<string, string | null>

/** The limits in words, for the document's descriptions. */
export const METADATA_LIMITS = `at most ${METADATA_MAX_KEYS} keys, each key 1 to ${METADATA_KEY_MAX_LENGTH} characters, ` +
  `each value 1 to ${METADATA_VALUE_MAX_LENGTH} characters`

const keySchema = { minLength: 1, maxLength: METADATA_KEY_MAX_LENGTH }

/** The metadata of an order as answered and as given at placement. */
export function metadataSchema (description: string, example: Metadata): TUnsafe<Metadata> {
  return Type.Unsafe<Metadata>({
    type: 'object',
    maxProperties: METADATA_MAX_KEYS,
    propertyNames: keySchema,
    additionalProperties: { type: 'string', minLength: 1, maxLength: METADATA_VALUE_MAX_LENGTH },
    description: `${description} Limits: ${METADATA_LIMITS}.`,
    examples: [example],
    [STABILITY_KEYWORD]: 'beta'
  })
}

/** The metadata of an order patch: a value sets its key, `null` removes it, keys left out are kept; `null` for the whole removes every key. */
export function metadataPatchSchema (example: MetadataPatch): TUnsafe<MetadataPatch | null> {
  return Type.Unsafe<MetadataPatch | null>({
    type: ['object', 'null'],
    maxProperties: METADATA_MAX_KEYS,
    propertyNames: keySchema,
    additionalProperties: { type: ['string', 'null'], minLength: 1, maxLength: METADATA_VALUE_MAX_LENGTH },
    description: 'Changes the order\'s metadata as a JSON Merge Patch (RFC 7396): a key with a string sets it, a key with `null` removes it, ' +
      'keys left out keep their value, and `metadata: null` removes every key. An empty string is refused (send `null` to remove a key). ' +
      `Limits: ${METADATA_LIMITS}, counted on the metadata after the patch (else 400, nothing changed).`,
    examples: [example],
    [STABILITY_KEYWORD]: 'beta'
  })
}

/** Metadata with its keys in code-unit order: the same keys and values are always the same bytes (and the same ETag), whichever engine stored them. */
export function sortedMetadata (metadata: Readonly<Record<string, unknown>>): Metadata {
  return Object.fromEntries(Object.keys(metadata).sort().map((key) => [key, String(metadata[key])]))
}

/** `current` with `patch` applied (RFC 7396), keys sorted. */
export function mergeMetadata (current: Metadata, patch: MetadataPatch | null | undefined): Metadata {
  if (patch === undefined) return current
  if (patch === null) return {}
  const merged = new Map(Object.entries(current))
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key)
    else merged.set(key, value)
  }
  return sortedMetadata(Object.fromEntries(merged))
}

/** Whether two metadata objects hold the same keys and values. */
export function sameMetadata (a: Metadata, b: Metadata): boolean {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key])
}
