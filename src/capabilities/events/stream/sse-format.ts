/**
 * The pieces of a Server-Sent Events stream (WHATWG HTML, "Server-sent events"), as the change feed writes
 * them, and the choice between it and the JSON page. Every line ends in `\n`; a message ends in a blank line.
 */

/** The media type of the stream. */
export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream'

/** How long a client waits before it reconnects after losing the stream, in ms: the `retry:` field sent first. */
export const STREAM_RETRY_MS = 2000

/** One event as a message: `id:`, `event:`, `data:` (the JSON, which holds no line break), then a blank line. */
export function eventMessage (id: number, type: string, json: string): Buffer {
  return Buffer.from(`id: ${id}\nevent: ${type}\ndata: ${json}\n\n`, 'utf8')
}

/** The `event:` of the one message that is no event: the stream's last, which says why it ended (an Error). */
export const ERROR_MESSAGE_EVENT = 'error'

/**
 * The last message of a stream the service ends for a reason its consumer must act on (retention passed its
 * position): `event: error` and, as `data:`, the Error body the same request would be answered with as JSON.
 * It has no `id:`, so a client's Last-Event-ID stays the last event it received.
 */
export function errorMessage (errorJson: string): Buffer {
  return Buffer.from(`event: ${ERROR_MESSAGE_EVENT}\ndata: ${errorJson}\n\n`, 'utf8')
}

/** The first bytes of every stream: the reconnection time, and a comment, so that the head goes out at once. */
export const STREAM_OPENING = Buffer.from(`retry: ${STREAM_RETRY_MS}\n: following the change feed\n\n`, 'utf8')

/** The comment sent every heartbeat: keeps an idle connection open through proxies; clients ignore it. */
export const HEARTBEAT = Buffer.from(': heartbeat\n\n', 'utf8')

// one media range of Accept: its type and its quality
const MEDIA_RANGE = /^\s*([^\s;]+)\s*(?:;(.*))?$/
const QUALITY = /(?:^|;)\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*(?:;|$)/i

/** The quality Accept gives each range it names (`type/subtype`, lower case); a range without `q` has 1. */
function qualities (accept: string): Map<string, number> {
  const byRange = new Map<string, number>()
  for (const part of accept.split(',')) {
    const match = MEDIA_RANGE.exec(part)
    if (match === null) continue
    const quality = QUALITY.exec(match[2] ?? '')?.[1]
    byRange.set((match[1] as string).toLowerCase(), quality === undefined ? 1 : Number(quality))
  }
  return byRange
}

/**
 * Whether `accept` asks for the stream rather than the JSON page: it names `text/event-stream` itself, with a
 * quality above 0 and at least that of JSON (`application/json`, `application/*` or `*\/*`). A wildcard alone
 * never starts a stream, so a client that accepts anything keeps getting pages.
 */
export function prefersEventStream (accept: string | undefined): boolean {
  if (accept === undefined || !accept.toLowerCase().includes(EVENT_STREAM_MEDIA_TYPE)) return false
  const byRange = qualities(accept)
  const stream = byRange.get(EVENT_STREAM_MEDIA_TYPE) ?? 0
  const json = byRange.get('application/json') ?? byRange.get('application/*') ?? byRange.get('*/*') ?? 0
  return stream > 0 && stream >= json
}
