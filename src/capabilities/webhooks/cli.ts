import type { CommandGroup } from '../../infra/cli/command-group.js'
import { loadConfig, type Config } from '../../infra/config/config.js'
import { describeDatabase, openDatabase } from '../../infra/database/open-database.js'
import { createWebhookDeliveryLog } from './store/create-webhook-delivery-log.js'
import { createWebhookStore } from './store/create-webhook-store.js'
import { RELEASE_HELD_LEASES_SQLITE } from './store/webhook-store.js'
import { WEBHOOK_COMMAND_OPTIONS, WEBHOOK_COMMANDS, type WebhookCommand } from './cli-commands.js'
import { checkedAsUsage, endpointId, noSuchEndpoint, optionalString, WebhookUsageError, type Output, type Run, type Values } from './cli-context.js'
import { prepareRedelivery } from './cli-redelivery.js'
import { formatEndpoints } from './cli-tables.js'
import { addEndpoint, checkEndpointChange, checkEndpointRequest, parseEventTypes, rotateEndpointSecret, type EndpointPatch } from './webhook-endpoints.js'

export { DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX } from './cli-commands.js'

/** `npx petstore webhooks …`; a restore ends the delivery leases the replaced database's instances held. */
export const WEBHOOKS_COMMAND_GROUP: CommandGroup = {
  name: 'webhooks',
  summary: 'register, edit, test and follow the endpoints events are delivered to',
  commands: Object.fromEntries(Object.entries(WEBHOOK_COMMANDS).map(([command, spec]) => [command, { ...spec, options: WEBHOOK_COMMAND_OPTIONS[command as WebhookCommand] }])),
  restoreReleases: [RELEASE_HELD_LEASES_SQLITE],
  run: async ({ command, values, positionals, env, out, err, eventTypes }) => await runWebhookCommand(command as WebhookCommand, values, positionals, loadConfig(env), eventTypes, out, err)
}

/**
 * Runs a `webhooks` command: its arguments are checked before the database is opened (a
 * {@link WebhookUsageError} changes nothing), then it runs on the configured store. The rules are the
 * API's (webhook-endpoints.ts): the commands only parse and print. `eventTypes`: the ones the feed carries.
 */
async function runWebhookCommand (command: WebhookCommand, values: Values, positionals: string[], config: Config, eventTypes: readonly string[], out: Output, err: Output): Promise<number> {
  const run = await prepare(command, values, positionals, config, eventTypes)
  const database = describeDatabase(config.database)
  const { database: opened } = await openDatabase(config.database)
  try {
    return await run({ webhooks: createWebhookStore(opened), deliveryLog: createWebhookDeliveryLog(opened), database, out, err })
  } finally {
    await opened.close()
  }
}

/** `--rate-limit`: a number, or `none` (update only) to remove the limit. */
function rateLimitOption (value: string | boolean | undefined, removable: boolean): number | null | undefined {
  if (value === undefined) return undefined
  const text = String(value)
  if (removable && text === 'none') return null
  // a malformed number is left to the rule, which words it
  return /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN
}

async function prepare (command: WebhookCommand, values: Values, positionals: string[], config: Config, eventTypes: readonly string[]): Promise<Run> {
  const json = values.json === true
  switch (command) {
    case 'webhooks add': {
      const [text, ...extra] = positionals
      if (text === undefined || extra.length > 0) throw new WebhookUsageError('webhooks add needs one URL')
      const request = await checkedAsUsage(command, async () => await checkEndpointRequest({
        url: text,
        events: parseEventTypes(optionalString(values.events), eventTypes),
        name: optionalString(values.name),
        description: optionalString(values.description),
        rateLimit: rateLimitOption(values['rate-limit'], false) ?? undefined,
        signing: optionalString(values.signing)
      }, config.webhooks, eventTypes))
      return async ({ webhooks, database, out, err }) => {
        const added = await addEndpoint(webhooks, request, new Date(), { reenable: true })
        if (added.outcome === 'limit-reached') {
          err(`petstore: ${database} has ${added.limit} webhook endpoints, the most it may have: remove one first (webhooks remove)`)
          return 1
        }
        const { endpoint } = added
        switch (added.outcome) {
          case 'already-registered':
            err(`petstore: ${endpoint.url} is already registered in ${database} as endpoint ${endpoint.id}; nothing was changed`)
            return 2
          case 're-enabled':
            out(json ? JSON.stringify({ database, id: endpoint.id, reenabled: true }, null, 2) : `Re-enabled webhook endpoint ${endpoint.id} (${endpoint.url}) in ${database}; its secret is unchanged.`)
            break
          case 'added': {
            const shown = added.publicKey === undefined
              ? `Its signing secret is shown only this once:\n\n  ${added.secret ?? ''}\n`
              : `Requests are signed with ed25519 (v1a); receivers verify them with its public key:\n\n  ${added.publicKey}\n`
            out(json
              ? JSON.stringify({ database, endpoint, ...(added.secret === undefined ? {} : { secret: added.secret }), ...(added.publicKey === undefined ? {} : { publicKey: added.publicKey }) }, null, 2)
              : `Added webhook endpoint ${endpoint.id} (${endpoint.name}) in ${database}: ${endpoint.url} receives ${endpoint.eventTypes.join(', ')}.\n${shown}`)
            break
          }
        }
        // the CLI's environment is not the server's: said on stderr, so that --json's document stays whole
        if (request.allowedBy.length > 0) {
          err(`petstore: note: ${endpoint.url} is accepted because this command's environment sets ${request.allowedBy.join(' and ')}; ` +
            `every server instance needs the same, or it refuses each delivery to endpoint ${endpoint.id} ("refused: …" in webhooks deliveries ${endpoint.id}).`)
        }
        return 0
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
        const { secret, publicKey, previousUntil } = rotated
        const shown = publicKey === undefined ? `The new secret is shown only this once:\n\n  ${secret ?? ''}` : `Its new public key:\n\n  ${publicKey}`
        out(json
          ? JSON.stringify({ database, id, ...(secret === undefined ? {} : { secret }), ...(publicKey === undefined ? {} : { publicKey }), previousSecretValidUntil: previousUntil.toISOString() }, null, 2)
          : `Rotated the signing ${publicKey === undefined ? 'secret' : 'key pair'} of webhook endpoint ${id} in ${database}. ${shown}\n\n` +
            `Until ${previousUntil.toISOString()} requests carry signatures under the old and the new ${publicKey === undefined ? 'secret' : 'key'}.`)
        return 0
      }
    }
    case 'webhooks update': {
      const id = endpointId(command, positionals)
      const patch: EndpointPatch = {
        ...(values.events === undefined ? {} : { events: await checkedAsUsage(command, () => parseEventTypes(String(values.events), eventTypes)) }),
        ...(values.name === undefined ? {} : { name: String(values.name) }),
        ...(values.url === undefined ? {} : { url: String(values.url) }),
        ...(values.description === undefined ? {} : { description: values.description === '' ? null : String(values.description) }),
        ...(values['rate-limit'] === undefined ? {} : { rateLimit: rateLimitOption(values['rate-limit'], true) })
      }
      if (Object.keys(patch).length === 0) throw new WebhookUsageError('webhooks update: nothing to change: give --events, --name, --url, --description or --rate-limit')
      const { change, allowedBy } = await checkedAsUsage(command, async () => await checkEndpointChange(patch, config.webhooks, eventTypes))
      return async ({ webhooks, database, out, err }) => {
        const changed = await webhooks.updateWebhookEndpoint(id, change, new Date())
        if (changed.outcome !== 'changed') return noSuchEndpoint(err, id, database)
        const { before, after } = changed
        const same = JSON.stringify({ ...before, waiting: 0, failed: 0 }) === JSON.stringify({ ...after, waiting: 0, failed: 0 })
        if (json) out(JSON.stringify({ database, id, changed: !same, endpoint: after }, null, 2))
        else if (same) out(`Webhook endpoint ${id} in ${database} already has those settings; nothing to do.`)
        else {
          out(`Updated webhook endpoint ${id} (${after.name}) in ${database}: it receives ${after.eventTypes.join(', ')}; its secret and its queue are kept.` +
            (change.eventTypes === undefined ? '' : '\nDeliveries of a type it no longer receives are dropped; a type it newly receives applies to events recorded from now on.'))
        }
        if (allowedBy.length > 0) err(`petstore: note: ${after.url} is accepted because this command's environment sets ${allowedBy.join(' and ')}; every server instance needs the same.`)
        return 0
      }
    }
    case 'webhooks disable':
    case 'webhooks enable': {
      const id = endpointId(command, positionals)
      const enabled = command === 'webhooks enable'
      return async ({ webhooks, database, out, err }) => {
        const changed = await webhooks.updateWebhookEndpoint(id, { enabled }, new Date())
        if (changed.outcome !== 'changed') return noSuchEndpoint(err, id, database)
        const already = (changed.before.disabledAt === null) === enabled
        const state = enabled ? 'enabled' : 'disabled'
        if (json) out(JSON.stringify({ database, id, [state]: true, changed: !already }, null, 2))
        else if (already) out(`Webhook endpoint ${id} in ${database} is already ${state}; nothing to do.`)
        else if (enabled) out(`Enabled webhook endpoint ${id} in ${database}; its waiting deliveries resume.`)
        else out(`Disabled webhook endpoint ${id} in ${database}: nothing is sent to it until \`webhooks enable ${id}\`; its ${changed.after.waiting} waiting ${changed.after.waiting === 1 ? 'delivery is' : 'deliveries are'} kept.`)
        return 0
      }
    }
    default:
      return await prepareRedelivery(command, values, positionals, config)
  }
}
