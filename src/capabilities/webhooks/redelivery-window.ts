import { WebhookEndpointError } from './webhook-endpoints.js'

// RFC 3339 with a time zone, as the API's date-times are written; Date.parse alone takes much else
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i
const DAY_MS = 86_400_000

/** The window of a recovery: the failed attempts sent from `since` to before `until` (times in ms). */
export interface RecoveryWindow {
  since: Date
  until: Date
}

function parseDateTime (field: 'since' | 'until', text: string): Date {
  const ms = DATE_TIME.test(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(ms)) throw new WebhookEndpointError(field, `must be an RFC 3339 date-time such as 2026-11-28T09:00:00Z, got ${JSON.stringify(text)}`)
  return new Date(ms)
}

/**
 * Checks the window of a recovery as both faces take it (RFC 3339 text): `since` not in the future and not before
 * retention (`retentionDays`: an attempt's event is deleted with it), `until` after `since`; `until` left out, or
 * later than `now`, takes every attempt up to `now`, the attempts of that millisecond too.
 */
export function checkRecoveryWindow (since: string, until: string | undefined, now: Date, retentionDays: number): RecoveryWindow {
  const from = parseDateTime('since', since)
  if (from.getTime() > now.getTime()) throw new WebhookEndpointError('since', `is in the future (${from.toISOString()}; it is now ${now.toISOString()})`)
  const oldest = now.getTime() - retentionDays * DAY_MS
  if (from.getTime() < oldest) {
    throw new WebhookEndpointError('since', `must be within the last ${retentionDays} days (from ${new Date(oldest).toISOString()}): the events of older attempts are no longer retained`)
  }
  const end = now.getTime() + 1
  const to = until === undefined ? end : parseDateTime('until', until).getTime()
  if (to <= from.getTime()) throw new WebhookEndpointError('until', `must be after since (${from.toISOString()})`)
  return { since: from, until: new Date(Math.min(to, end)) }
}
