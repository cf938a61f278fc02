import type { Config } from '../../infra/config/config.js'
import { EVENT_TYPES } from '../events/index.js'
import { describeDatabase, openDatabase } from '../../infra/database/open-database.js'
import { createWebhookStore } from './store/create-webhook-store.js'
import type { WebhookEndpointRecord, WebhookStore } from './store/webhook-store.js'
import { addEndpoint, checkEndpointRequest, rotateEndpointSecret, SECRET_ROTATION_OVERLAP_MS, WebhookEndpointError } from './webhook-endpoints.js'

/** The `webhooks` commands: how each is called and what it does, for `--help` and the overall usage. */
export const WEBHOOK_COMMANDS = {
  'webhooks add': {
    usage: `webhooks add <url> [--events ${EVENT_TYPES.join(',')}] [--name <text>] [--json]`,
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
  'webhooks remove': { usage: 'webhooks remove <id>', help: 'delete an endpoint and the deliveries still waiting for it' },
  'webhooks rotate-secret': {
    usage: 'webhooks rotate-secret <id> [--json]',
    help: `give an endpoint a new signing secret and print it (shown only this once); for ${SECRET_ROTATION_OVERLAP_MS / 3_600_000} hours requests carry
signatures under both secrets, so the receiver can switch without losing a delivery`
  },
  'webhooks enable': { usage: 'webhooks enable <id>', help: 're-enable an endpoint disabled after failing for 3 days; its waiting deliveries resume' }
} as const
export type WebhookCommand = keyof typeof WEBHOOK_COMMANDS

/** The options each command takes (besides --help). */
export const WEBHOOK_COMMAND_OPTIONS = {
  'webhooks add': { events: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  'webhooks list': { json: { type: 'boolean' } },
  'webhooks remove': {},
  'webhooks rotate-secret': { json: { type: 'boolean' } },
  'webhooks enable': {}
} as const satisfies Record<WebhookCommand, Record<string, { type: 'string' | 'boolean' }>>

/** A mistake in how a command was called: the message, printed with its usage, exit code 2. */
export class WebhookUsageError extends Error {}

type Output = (line: string) => void
type Values = Record<string, string | boolean | undefined>
type Run = (webhooks: WebhookStore, database: string, out: Output, err: Output) => Promise<number>

/**
 * Runs a `webhooks` command: its arguments are checked before the database is opened (a
 * {@link WebhookUsageError} changes nothing), then it runs on the configured store.
 */
export async function runWebhookCommand (command: WebhookCommand, values: Values, positionals: string[], config: Config, out: Output, err: Output): Promise<number> {
  const run = await prepare(command, values, positionals, config)
  const database = describeDatabase(config.database)
  const { database: opened } = await openDatabase(config.database)
  try {
    return await run(createWebhookStore(opened), database, out, err)
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
      const request = await checkEndpointRequest(text, optionalString(values.events), optionalString(values.name), config.webhooks).catch((error: unknown) => {
        throw error instanceof WebhookEndpointError ? new WebhookUsageError(error.field === 'url' ? `webhooks add: ${error.message}` : error.message) : error
      })
      return async (webhooks, database, out, err) => {
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
      return async (webhooks, database, out) => {
        const endpoints = await webhooks.listWebhookEndpoints()
        out(json ? JSON.stringify({ database, endpoints }, null, 2) : formatEndpoints(database, endpoints))
        return 0
      }
    case 'webhooks remove': {
      const id = endpointId(command, positionals)
      return async (webhooks, database, out, err) => {
        if (!await webhooks.removeWebhookEndpoint(id)) return noSuchEndpoint(err, id, database)
        out(`Removed webhook endpoint ${id} from ${database}, with the deliveries still waiting for it.`)
        return 0
      }
    }
    case 'webhooks rotate-secret': {
      const id = endpointId(command, positionals)
      return async (webhooks, database, out, err) => {
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
    case 'webhooks enable': {
      const id = endpointId(command, positionals)
      return async (webhooks, database, out, err) => {
        if (!await webhooks.enableWebhookEndpoint(id)) return noSuchEndpoint(err, id, database)
        out(`Enabled webhook endpoint ${id} in ${database}; its waiting deliveries resume.`)
        return 0
      }
    }
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

function formatEndpoints (database: string, endpoints: readonly WebhookEndpointRecord[]): string {
  if (endpoints.length === 0) return `No webhook endpoints in ${database}.`
  const rows = [['ID', 'NAME', 'URL', 'EVENTS', 'CREATED', 'DISABLED', 'WAITING', 'FAILED', 'LAST SUCCESS', 'LAST FAILURE'],
    ...endpoints.map((endpoint) => [String(endpoint.id), endpoint.name, endpoint.url, endpoint.eventTypes.join(','), endpoint.createdAt,
      endpoint.disabledAt ?? '-', String(endpoint.waiting), String(endpoint.failed), endpoint.lastSuccessAt ?? '-',
      endpoint.lastFailureAt === null ? '-' : `${endpoint.lastFailureAt} (${endpoint.lastFailure ?? 'failed'})`])]
  const widths = (rows[0] as string[]).map((_, column) => Math.max(...rows.map((row) => (row[column] as string).length)))
  const table = rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd()).join('\n')
  return `Webhook endpoints in ${database}:\n\n${table}`
}
