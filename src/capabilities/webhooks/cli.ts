import { CommandUsageError, type CommandGroup } from '../../infra/cli/command-group.js'
import { loadConfig, type Config } from '../../infra/config/config.js'
import { describeDatabase, openDatabase } from '../../infra/database/open-database.js'
import { createWebhookDeliveryLog } from './store/create-webhook-delivery-log.js'
import { createWebhookStore } from './store/create-webhook-store.js'
import { RELEASE_HELD_LEASES_SQLITE } from './store/webhook-store.js'
import type { WebhookDeliveryLog } from './store/webhook-delivery-log.js'
import type { WebhookStore } from './store/webhook-store.js'
import { CLI_EVENT_TYPES } from './cli-event-types.js'
import { formatAttempts, formatEndpoints } from './cli-tables.js'
import { addEndpoint, checkEndpointChange, checkEndpointRequest, rotateEndpointSecret, SECRET_ROTATION_OVERLAP_MS, WebhookEndpointError } from './webhook-endpoints.js'
import { WEBHOOK_TEST_ID_PREFIX, WEBHOOK_TEST_TYPE, webhookTestMessage } from './webhook-test-message.js'

/** `webhooks deliveries` lists this many attempts unless `--limit` says otherwise: a screenful. */
export const DELIVERIES_LIMIT_DEFAULT = 50
/** The most attempts `webhooks deliveries --limit` lists. */
export const DELIVERIES_LIMIT_MAX = 1000

/** The `webhooks` commands: how each is called and what it does, for `--help` and the overall usage. */
const WEBHOOK_COMMANDS = {
  'webhooks add': {
    usage: `webhooks add <url> [--events ${CLI_EVENT_TYPES.join(',')}] [--name <text>] [--json]`,
    help: `register an endpoint for the events it names (all by default) and print its id and signing secret
(shown only this once); only events recorded from now on are sent to it. https: only (http: with
WEBHOOK_ALLOW_HTTP=true); a host that is or resolves to a special-purpose address (loopback, private,
link-local, documentation, 6to4, NAT64…) or one of this host's own is refused unless WEBHOOK_ALLOWED_NETWORKS
names its network. Adding the URL of a disabled endpoint re-enables it`
  },
  'webhooks list': {
    usage: 'webhooks list [--json]',
    help: 'list endpoints: id, name, url, events, created, disabled, deliveries waiting and failed, last success and last failure (never a secret)'
  },
  'webhooks update': {
    usage: `webhooks update <id> [--events ${CLI_EVENT_TYPES.join(',')}] [--name <text>] [--json]`,
    help: `change the event types an endpoint receives, its name, or both, keeping its secret and its queue: deliveries
waiting (or given up) of a type it no longer receives are dropped and not sent; a type it newly receives applies
to the events recorded from now on`
  },
  'webhooks remove': { usage: 'webhooks remove <id> [--json]', help: 'delete an endpoint, its waiting deliveries and its delivery attempts' },
  'webhooks rotate-secret': {
    usage: 'webhooks rotate-secret <id> [--json]',
    help: `give an endpoint a new signing secret and print it (shown only this once); for ${SECRET_ROTATION_OVERLAP_MS / 3_600_000} hours requests carry
signatures under both secrets, so the receiver can switch without losing a delivery`
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
  }
} as const
type WebhookCommand = keyof typeof WEBHOOK_COMMANDS

/** The options each command takes (besides --help). */
const WEBHOOK_COMMAND_OPTIONS = {
  'webhooks add': { events: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  'webhooks list': { json: { type: 'boolean' } },
  'webhooks update': { events: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  'webhooks remove': { json: { type: 'boolean' } },
  'webhooks rotate-secret': { json: { type: 'boolean' } },
  'webhooks disable': { json: { type: 'boolean' } },
  'webhooks enable': { json: { type: 'boolean' } },
  'webhooks test': { json: { type: 'boolean' } },
  'webhooks deliveries': { failed: { type: 'boolean' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  'webhooks retry': { json: { type: 'boolean' } }
} as const satisfies Record<WebhookCommand, Record<string, { type: 'string' | 'boolean' }>>

/** A mistake in how a command was called: the message, printed with its usage, exit code 2. */
class WebhookUsageError extends CommandUsageError {}

type Output = (line: string) => void
type Values = Record<string, string | boolean | undefined>
/** What a command runs with: the stores on the configured database, its description, and the outputs. */
interface Context {
  webhooks: WebhookStore
  deliveryLog: WebhookDeliveryLog
  database: string
  out: Output
  err: Output
}
type Run = (context: Context) => Promise<number>

/** `npx petstore webhooks …`; a restore ends the delivery leases the replaced database's instances held. */
export const WEBHOOKS_COMMAND_GROUP: CommandGroup = {
  name: 'webhooks',
  summary: 'register, edit, test and follow the endpoints events are delivered to',
  commands: Object.fromEntries(Object.entries(WEBHOOK_COMMANDS).map(([command, spec]) => [command, { ...spec, options: WEBHOOK_COMMAND_OPTIONS[command as WebhookCommand] }])),
  restoreReleases: [RELEASE_HELD_LEASES_SQLITE],
  run: async ({ command, values, positionals, env, out, err }) => await runWebhookCommand(command as WebhookCommand, values, positionals, loadConfig(env), out, err)
}

/**
 * Runs a `webhooks` command: its arguments are checked before the database is opened (a
 * {@link WebhookUsageError} changes nothing), then it runs on the configured store.
 */
async function runWebhookCommand (command: WebhookCommand, values: Values, positionals: string[], config: Config, out: Output, err: Output): Promise<number> {
  const run = await prepare(command, values, positionals, config)
  const database = describeDatabase(config.database)
  const { database: opened } = await openDatabase(config.database)
  try {
    return await run({ webhooks: createWebhookStore(opened), deliveryLog: createWebhookDeliveryLog(opened), database, out, err })
  } finally {
    await opened.close()
  }
}

async function prepare (command: WebhookCommand, values: Values, positionals: string[], config: Config): Promise<Run> {
  const json = values.json === true
  switch (command) {
    case 'webhooks add': {
      const [text, ...extra] = positionals
      if (text === undefined || extra.length > 0) throw new WebhookUsageError('webhooks add needs one URL')
      const request = await checkEndpointRequest(text, optionalString(values.events), optionalString(values.name), config.webhooks, CLI_EVENT_TYPES).catch((error: unknown) => {
        throw error instanceof WebhookEndpointError ? new WebhookUsageError(error.field === 'url' ? `webhooks add: ${error.message}` : error.message) : error
      })
      return async ({ webhooks, database, out, err }) => {
        const added = await addEndpoint(webhooks, request, new Date())
        const { endpoint } = added
        switch (added.outcome) {
          case 'already-registered':
            err(`petstore: ${endpoint.url} is already registered in ${database} as endpoint ${endpoint.id}; nothing was changed`)
            return 2
          case 're-enabled':
            out(json ? JSON.stringify({ database, id: endpoint.id, reenabled: true }, null, 2) : `Re-enabled webhook endpoint ${endpoint.id} (${endpoint.url}) in ${database}; its secret is unchanged.`)
            return 0
          case 'added':
            out(json
              ? JSON.stringify({ database, endpoint, secret: added.secret }, null, 2)
              : `Added webhook endpoint ${endpoint.id} (${endpoint.name}) in ${database}: ${endpoint.url} receives ${endpoint.eventTypes.join(', ')}.\n` +
                `Its signing secret is shown only this once:\n\n  ${added.secret}\n`)
            return 0
        }
      }
    }
    case 'webhooks list':
      if (positionals.length > 0) throw new WebhookUsageError('webhooks list takes no arguments but --json')
      return async ({ webhooks, database, out }) => {
        const endpoints = await webhooks.listWebhookEndpoints()
        out(json ? JSON.stringify({ database, endpoints }, null, 2) : formatEndpoints(database, endpoints))
        return 0
      }
    case 'webhooks remove': {
      const id = endpointId(command, positionals)
      return async ({ webhooks, database, out, err }) => {
        if (!await webhooks.removeWebhookEndpoint(id)) return noSuchEndpoint(err, id, database)
        out(json ? JSON.stringify({ database, id, removed: true }, null, 2) : `Removed webhook endpoint ${id} from ${database}, with the deliveries still waiting for it.`)
        return 0
      }
    }
    case 'webhooks rotate-secret': {
      const id = endpointId(command, positionals)
      return async ({ webhooks, database, out, err }) => {
        const rotated = await rotateEndpointSecret(webhooks, id, new Date())
        if (rotated === undefined) return noSuchEndpoint(err, id, database)
        const { secret, previousUntil } = rotated
        out(json
          ? JSON.stringify({ database, id, secret, previousSecretValidUntil: previousUntil.toISOString() }, null, 2)
          : `Rotated the signing secret of webhook endpoint ${id} in ${database}. The new secret is shown only this once:\n\n  ${secret}\n\n` +
            `Until ${previousUntil.toISOString()} requests carry signatures under the old and the new secret.`)
        return 0
      }
    }
    case 'webhooks update': {
      const id = endpointId(command, positionals)
      const change = rethrowAsUsage(command, () => checkEndpointChange(optionalString(values.events), optionalString(values.name), CLI_EVENT_TYPES))
      return async ({ webhooks, database, out, err }) => {
        const changed = await webhooks.updateWebhookEndpoint(id, change, new Date())
        if (changed === undefined) return noSuchEndpoint(err, id, database)
        const { before, after } = changed
        const same = before.name === after.name && before.eventTypes.join() === after.eventTypes.join()
        if (json) out(JSON.stringify({ database, id, changed: !same, endpoint: after }, null, 2))
        else if (same) out(`Webhook endpoint ${id} in ${database} already has that name and those event types; nothing to do.`)
        else {
          out(`Updated webhook endpoint ${id} (${after.name}) in ${database}: it receives ${after.eventTypes.join(', ')}; its secret and its queue are kept.` +
            (change.eventTypes === undefined ? '' : '\nDeliveries of a type it no longer receives are dropped; a type it newly receives applies to events recorded from now on.'))
        }
        return 0
      }
    }
    case 'webhooks disable':
    case 'webhooks enable': {
      const id = endpointId(command, positionals)
      const enabled = command === 'webhooks enable'
      return async ({ webhooks, database, out, err }) => {
        const changed = await webhooks.updateWebhookEndpoint(id, { enabled }, new Date())
        if (changed === undefined) return noSuchEndpoint(err, id, database)
        const already = (changed.before.disabledAt === null) === enabled
        const state = enabled ? 'enabled' : 'disabled'
        if (json) out(JSON.stringify({ database, id, [state]: true, changed: !already }, null, 2))
        else if (already) out(`Webhook endpoint ${id} in ${database} is already ${state}; nothing to do.`)
        else if (enabled) out(`Enabled webhook endpoint ${id} in ${database}; its waiting deliveries resume.`)
        else out(`Disabled webhook endpoint ${id} in ${database}: nothing is sent to it until \`webhooks enable ${id}\`; its ${changed.after.waiting} waiting ${changed.after.waiting === 1 ? 'delivery is' : 'deliveries are'} kept.`)
        return 0
      }
    }
    case 'webhooks test': {
      const id = endpointId(command, positionals)
      return async ({ deliveryLog, database, out, err }) => await sendTestMessage(deliveryLog, id, config, json, database, out, err)
    }
    case 'webhooks deliveries': {
      const id = endpointId(command, positionals)
      const query = { failedOnly: values.failed === true, limit: deliveriesLimit(values.limit) }
      return async ({ deliveryLog, database, out, err }) => {
        const attempts = await deliveryLog.listWebhookAttempts(id, query)
        if (attempts === undefined) return noSuchEndpoint(err, id, database)
        out(json ? JSON.stringify({ database, id, attempts }, null, 2) : formatAttempts(database, id, query, attempts))
        return 0
      }
    }
    case 'webhooks retry': {
      const id = endpointId(command, positionals)
      return async ({ deliveryLog, database, out, err }) => {
        const retried = await deliveryLog.requeueGivenUpWebhookDeliveries(id)
        if (retried === undefined) return noSuchEndpoint(err, id, database)
        const { requeued, expired, disabled } = retried
        if (json) {
          out(JSON.stringify({ database, id, requeued, expired, disabled }, null, 2))
          return 0
        }
        const lines = [requeued === 0
          ? `Webhook endpoint ${id} in ${database} has no given-up delivery to retry.`
          : `Put ${requeued} given-up ${requeued === 1 ? 'delivery' : 'deliveries'} of webhook endpoint ${id} back in line in ${database}; running instances send them now, oldest first.`]
        if (expired > 0) lines.push(`${expired} given-up ${expired === 1 ? 'delivery stays' : 'deliveries stay'} given up: retention has deleted ${expired === 1 ? 'its event' : 'their events'}.`)
        if (disabled) lines.push(`The endpoint is disabled: nothing is sent to it until \`webhooks enable ${id}\`.`)
        out(lines.join('\n'))
        return 0
      }
    }
  }
}

/** Sends a `webhook.test` message with the sender deliveries use (its signing, address guard and timeout), and prints what came of it. */
async function sendTestMessage (deliveryLog: WebhookDeliveryLog, id: number, config: Config, json: boolean, database: string, out: Output, err: Output): Promise<number> {
  const now = new Date()
  const target = await deliveryLog.findWebhookTestTarget(id, now)
  if (target === undefined) return noSuchEndpoint(err, id, database)
  const { message, id: webhookId } = webhookTestMessage(id, now)
  // loaded only for this command: undici comes with it
  const { WebhookSender } = await import('./webhook-sender.js')
  const sender = new WebhookSender(config.webhooks)
  const started = performance.now()
  try {
    const sent = await sender.post({ url: target.url, id: webhookId, body: JSON.stringify(message), secrets: target.secrets }, now, new AbortController().signal)
    const durationMs = Math.round(performance.now() - started)
    const status = sent.status ?? null
    const error = sent.delivered ? null : sent.error
    if (json) {
      out(JSON.stringify({ database, id, url: target.url, webhookId, type: WEBHOOK_TEST_TYPE, disabled: target.disabled, delivered: sent.delivered, status, error, durationMs }, null, 2))
    } else {
      const sentTo = `a ${WEBHOOK_TEST_TYPE} message (webhook-id ${webhookId}) to webhook endpoint ${id} (${target.url}) of ${database}`
      const note = target.disabled ? `\nThe endpoint is disabled: its deliveries resume after \`webhooks enable ${id}\`.` : ''
      if (sent.delivered) out(`Sent ${sentTo}: delivered, answered ${sent.status} in ${durationMs} ms.${note}`)
      else err(`petstore: sent ${sentTo}: not delivered: ${sent.error} (after ${durationMs} ms).${note}`)
    }
    return sent.delivered ? 0 : 1
  } finally {
    await sender.close()
  }
}

function deliveriesLimit (value: string | boolean | undefined): number {
  if (value === undefined) return DELIVERIES_LIMIT_DEFAULT
  const text = String(value)
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN
  if (!(limit >= 1 && limit <= DELIVERIES_LIMIT_MAX)) {
    throw new WebhookUsageError(`webhooks deliveries: --limit must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}, got "${text}"`)
  }
  return limit
}

/** Runs a check of the command's arguments: a {@link WebhookEndpointError} is a usage error. */
function rethrowAsUsage<T> (command: WebhookCommand, check: () => T): T {
  try {
    return check()
  } catch (error) {
    throw error instanceof WebhookEndpointError ? new WebhookUsageError(`${command}: ${error.message}`) : error
  }
}

function optionalString (value: string | boolean | undefined): string | undefined {
  return value === undefined ? undefined : String(value)
}

function endpointId (command: WebhookCommand, positionals: string[]): number {
  const [id, ...extra] = positionals
  if (id === undefined || !/^[1-9]\d{0,15}$/.test(id) || extra.length > 0 || !Number.isSafeInteger(Number(id))) {
    throw new WebhookUsageError(`${command} needs the numeric id of an endpoint (see webhooks list)`)
  }
  return Number(id)
}

function noSuchEndpoint (err: Output, id: number, database: string): number {
  err(`petstore: no webhook endpoint has id ${id} in ${database}`)
  return 1
}
