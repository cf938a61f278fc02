import { ENDPOINT_RATE_LIMIT_MAX, SECRET_ROTATION_OVERLAP_MS, WEBHOOK_ENDPOINTS_MAX } from './endpoint-limits.js'
import { SIGNING_SCHEMES } from './signature.js'
import { WEBHOOK_TEST_ID_PREFIX, WEBHOOK_TEST_TYPE } from './webhook-test-message.js'

/** `webhooks deliveries` lists this many attempts unless `--limit` says otherwise: a screenful. */
export const DELIVERIES_LIMIT_DEFAULT = 50
/** The most attempts `webhooks deliveries --limit` lists. */
export const DELIVERIES_LIMIT_MAX = 1000

// the types, from the capabilities that record events, are in the command's usage (src/bin/cli.ts)
const EVENTS = '<type,…>'

/** The `webhooks` commands: how each is called and what it does, for `--help` and the overall usage. */
export const WEBHOOK_COMMANDS = {
  'webhooks add': {
    usage: `webhooks add <url> [--events ${EVENTS}] [--name <text>] [--description <text>] [--rate-limit <n>] [--signing ${SIGNING_SCHEMES.join('|')}] [--json]`,
    help: `register an endpoint for the events it names (all by default) and print its id and signing secret
(shown only this once; with --signing ed25519, its public key: the private key never leaves the store); only
events recorded from now on are sent to it, at most --rate-limit a second (1 to ${ENDPOINT_RATE_LIMIT_MAX}; no limit by
default); at most ${WEBHOOK_ENDPOINTS_MAX} endpoints. https: only (http: with WEBHOOK_ALLOW_HTTP=true); a host that is or resolves to a
special-purpose address (loopback, private, link-local, documentation, 6to4, NAT64…) or one of this host's own is
refused unless WEBHOOK_ALLOWED_NETWORKS names its network; the server needs the same settings to deliver there,
which the command reminds. Adding the URL of a disabled endpoint re-enables it`
  },
  'webhooks list': {
    usage: 'webhooks list [--json]',
    help: 'list endpoints: id, name, url, events, created, disabled, deliveries waiting and failed, last success and last failure (never a secret)'
  },
  'webhooks update': {
    usage: `webhooks update <id> [--events ${EVENTS}] [--name <text>] [--url <url>] [--description <text>] [--rate-limit <n|none>] [--json]`,
    help: `change the event types an endpoint receives, its name, URL (checked as by add), description ('' removes it) or rate
limit, keeping its secret and its queue: deliveries waiting (or given up) of a type it no longer receives are dropped
and not sent; a type it newly receives applies to the events recorded from now on`
  },
  'webhooks remove': { usage: 'webhooks remove <id> [--json]', help: 'delete an endpoint, its waiting deliveries and its delivery attempts' },
  'webhooks rotate-secret': {
    usage: 'webhooks rotate-secret <id> [--json]',
    help: `give an endpoint a new signing secret (or ed25519 key pair) and print it (its public key) only this once; for
${SECRET_ROTATION_OVERLAP_MS / 3_600_000} hours requests carry signatures under both, so the receiver can switch without losing a delivery`
  },
  'webhooks disable': {
    usage: 'webhooks disable <id> [--json]',
    help: 'stop sending to an endpoint; its queue is kept, and events recorded meanwhile are queued for it when it is enabled'
  },
  'webhooks enable': {
    usage: 'webhooks enable <id> [--json]',
    help: `re-enable an endpoint disabled by webhooks disable, after failing for 3 days or by a 410 Gone answer: its waiting
deliveries are sent at once, then the events recorded while it was disabled, in event-id order`
  },
  'webhooks test': {
    usage: 'webhooks test <id> [--json]',
    help: `send the endpoint one signed message of type ${WEBHOOK_TEST_TYPE} now, as deliveries are sent (same signing, address
rules and timeout; also to a disabled endpoint), and print what came of it: the status or the error, and how long
it took; exit code 1 when it was not delivered. Its body is {"type":"${WEBHOOK_TEST_TYPE}","timestamp":…,"data":{"endpointId":…,"message":…}},
its webhook-id ${WEBHOOK_TEST_ID_PREFIX}…; it is not an event: not in the feed, not retried, not in webhooks deliveries`
  },
  'webhooks deliveries': {
    usage: 'webhooks deliveries <id> [--failed] [--limit <n>] [--json]',
    help: `show the endpoint's delivery attempts, newest first (the last ${DELIVERIES_LIMIT_DEFAULT}; --limit 1 to ${DELIVERIES_LIMIT_MAX}): event id
and type, when it was sent, delivered or the status or error, how long it took, and the next attempt or
"given up"; --failed shows only the attempts that failed. Attempts are kept as long as their events (EVENT_RETENTION_DAYS)`
  },
  'webhooks retry': {
    usage: 'webhooks retry <id> [--json]',
    help: `put every given-up delivery of the endpoint back in line, due now with the whole retry schedule again (webhooks
deliveries numbers their attempts on: 4, 5 … after three), and print how many; running instances are woken and send them oldest first (a disabled endpoint first needs
webhooks enable)`
  },
  'webhooks resend': {
    usage: 'webhooks resend <id> <event id> [--json]',
    help: `send the endpoint that event again, now, with the whole retry schedule (delivered before or not); refused for a
disabled endpoint, an event it does not receive, and one no longer retained`
  },
  'webhooks recover': {
    usage: 'webhooks recover <id> --since <date-time> [--until <date-time>] [--json]',
    help: `put back in line every event the endpoint failed or gave up on from --since to --until (RFC 3339; until now by
default; within EVENT_RETENTION_DAYS), due now with the whole retry schedule, and print how many; they are sent in
event-id order, each once: a delivery made since is not sent again. Refused for a disabled endpoint`
  }
} as const
export type WebhookCommand = keyof typeof WEBHOOK_COMMANDS

const JSON_OPTION = { json: { type: 'boolean' } } as const

/** The options each command takes (besides --help). */
export const WEBHOOK_COMMAND_OPTIONS = {
  'webhooks add': {
    events: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' }, 'rate-limit': { type: 'string' }, signing: { type: 'string' }, ...JSON_OPTION
  },
  'webhooks list': JSON_OPTION,
  'webhooks update': {
    events: { type: 'string' }, name: { type: 'string' }, url: { type: 'string' }, description: { type: 'string' }, 'rate-limit': { type: 'string' }, ...JSON_OPTION
  },
  'webhooks remove': JSON_OPTION,
  'webhooks rotate-secret': JSON_OPTION,
  'webhooks disable': JSON_OPTION,
  'webhooks enable': JSON_OPTION,
  'webhooks test': JSON_OPTION,
  'webhooks deliveries': { failed: { type: 'boolean' }, limit: { type: 'string' }, ...JSON_OPTION },
  'webhooks retry': JSON_OPTION,
  'webhooks resend': JSON_OPTION,
  'webhooks recover': { since: { type: 'string' }, until: { type: 'string' }, ...JSON_OPTION }
} as const satisfies Record<WebhookCommand, Record<string, { type: 'string' | 'boolean' }>>
