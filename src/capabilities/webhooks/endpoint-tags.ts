import { twoPartTagging, type TagParts } from '../../infra/http/tagged-answers.js'

/** JSON with every object's keys sorted: the same text for the same value whichever order it was written in. */
function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** An endpoint's two parts: its settings, then its health. */
function partsOf (endpoint: { health: unknown }): TagParts {
  const { health, ...settings } = endpoint
  return [canonicalJson(settings), canonicalJson(health)]
}

/**
 * A webhook endpoint's tags (GET, PATCH): strong, in two parts, its settings' and its health's, so a
 * conditional GET sees any change (a 304 only while neither changed), and a PATCH's `If-Match` compares the
 * settings' part only: the health changes with every delivery, and a change made with a tag read a moment
 * before a delivery would otherwise always fail.
 */
export const ENDPOINT_TAGGING = twoPartTagging((body) => partsOf(JSON.parse(body) as { health: unknown }))

/** The tag of an endpoint as answered: its settings' part, then its health's. */
export function endpointTag (endpoint: { health: unknown }): string {
  return ENDPOINT_TAGGING.tagOf(JSON.stringify(endpoint))
}
