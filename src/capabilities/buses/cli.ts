import { existsSync } from 'node:fs'
import { CommandUsageError, onConfiguredDatabase, type CommandGroup } from '../../infra/cli/command-group.js'
import type { Config } from '../../infra/config/config.js'
import { deploymentIdOf, FORGET_DEPLOYMENT_ID_SQLITE } from '../../infra/database/deployment-id.js'
import { describeDatabase, openDatabase } from '../../infra/database/open-database.js'
import { describeBrokerUrl } from './bus.js'
import { eventSourceOf } from './cloud-event.js'
import { createBusPositionStore } from './store/create-bus-position-store.js'
import { RELEASE_HELD_BUS_LEASES_SQLITE, WAITING_COUNT_LIMIT, type BusName, type BusStatus } from './store/bus-position-store.js'

/** `npx petstore buses`: where each bus stands; a restore ends the leases of the publishers the copy names. */
export const BUSES_COMMAND_GROUP: CommandGroup = {
  name: 'buses',
  summary: 'show where each message bus stands',
  commands: {
    buses: {
      usage: 'buses [--json]',
      options: { json: { type: 'boolean' } },
      help: `show each message bus the events are relayed to (NATS_URL, AMQP_URL): its position (the last event its broker
acknowledged), the events waiting and how old the oldest is, its last error, and which instance publishes it now
(host:pid, while its lease lasts); and the deployment's CloudEvents source (urn:uuid:<deployment id>, also the
prefix of every message id); a bus is listed once a server has run with it configured`
    }
  },
  // a restored copy reuses event ids its consumers saw after the backup: it takes a new identity (a new `source`)
  restoreReleases: [RELEASE_HELD_BUS_LEASES_SQLITE, FORGET_DEPLOYMENT_ID_SQLITE],
  run: async ({ values, positionals, env, out, err }) => {
    if (positionals.length > 0) throw new CommandUsageError('buses takes no arguments')
    return await onConfiguredDatabase(env, async (config) => await runBusCommand(values.json === true, config, out, err))
  }
}

type Output = (line: string) => void

/** What the configuration here says of each bus: where it publishes, or undefined when not configured. */
function configuredHere (config: Config): Record<BusName, string | undefined> {
  const { nats, amqp } = config.buses
  return {
    nats: nats === undefined ? undefined : `${describeBrokerUrl(nats.url)}, stream ${nats.stream}, subjects ${nats.subjectPrefix}.>`,
    rabbitmq: amqp === undefined ? undefined : `${describeBrokerUrl(amqp.url)}, exchange ${amqp.exchange}`
  }
}

/** Runs `buses` on the configured database (a SQLite file that does not exist is not created); resolves to the exit code. */
async function runBusCommand (json: boolean, config: Config, out: Output, err: Output): Promise<number> {
  const database = describeDatabase(config.database)
  if (config.database.kind === 'sqlite' && !existsSync(config.database.path)) {
    err(`petstore: ${database} does not exist, so no bus has published from it; nothing was created.`)
    return 1
  }
  const { database: opened } = await openDatabase(config.database)
  let buses: BusStatus[]
  let source: string
  try {
    buses = await createBusPositionStore(opened).listBuses(Date.now())
    source = eventSourceOf(await deploymentIdOf(opened))
  } finally {
    await opened.close()
  }
  const here = configuredHere(config)
  if (json) {
    out(JSON.stringify({ database, source, buses: buses.map((bus) => ({ ...bus, configuredHere: here[bus.bus] ?? null })) }, null, 2))
    return 0
  }
  if (buses.length === 0) {
    out(`No message bus in ${database}: a server with NATS_URL or AMQP_URL set lists its bus here once it has started.`)
    return 0
  }
  out(`Message buses in ${database}, every event's CloudEvents source ${source}:\n\n${buses.map((bus) => formatBus(bus, here[bus.bus], Date.now())).join('\n\n')}`)
  return 0
}

function formatBus (bus: BusStatus, configured: string | undefined, now: number): string {
  const ago = (at: Date): string => `${Math.max(0, Math.round((now - at.getTime()) / 1000))} s ago, ${at.toISOString()}`
  const waiting = bus.waitingEvents === 0
    ? 'none'
    : `${bus.waitingEvents}${bus.waitingEvents >= WAITING_COUNT_LIMIT ? '+' : ''} events, the oldest committed ${bus.oldestWaitingAt === undefined ? '?' : ago(bus.oldestWaitingAt)}`
  const lines = [
    ['position', `${bus.publishedThrough}${bus.publishedAt === undefined ? ' (nothing published yet)' : ` (last moved ${ago(bus.publishedAt)})`}`],
    ['newest event', String(bus.newestEventId)],
    ['waiting', waiting],
    ['publisher', bus.publisher === undefined ? 'none (no instance holds the lease: idle, or its instances are stopped)' : `${bus.publisher} (lease until ${bus.leaseUntil?.toISOString() ?? '?'})`],
    ['last error', bus.lastError === undefined ? 'none' : `${bus.lastErrorAt === undefined ? '' : `${ago(bus.lastErrorAt)}: `}${bus.lastError}`]
  ]
  return `${bus.bus}${configured === undefined ? ' (not configured here)' : ` (here: ${configured})`}\n${lines.map(([name, value]) => `  ${(name ?? '').padEnd(13)}${value ?? ''}`).join('\n')}`
}
