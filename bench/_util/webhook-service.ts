import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { childEnv } from '../../tools/harness/child-env.js'
import { PROJECT_ROOT } from '../../tools/harness/project-root.js'
import { scratchStore, type StoreKind } from '../../tools/harness/scratch-store.js'
import type { ServerProcess } from '../../tools/harness/server-process.js'
import type { BenchContext } from './bench-context.js'
import { burstCreates, petIds, type Created } from './create-load.js'
import { startService, stopServer } from './servers.js'
import { startReceivers, type Receipt, type ReceiverBehaviour, type WebhookReceiver } from './webhook-receivers.js'

/** What lets the service deliver to receivers on this host: http: URLs, and the loopback network past the SSRF guard. */
export const WEBHOOK_ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } as const

const run = promisify(execFile)
// the dispatcher starts at the first poll that finds an enabled endpoint (250 ms), then delivers the warm-up create
const WARM_UP_TIMEOUT_MS = 15_000

/** A service on a store of its own, with endpoints registered for its receivers. */
export interface WebhookService {
  kind: StoreKind
  storeUrl: string
  service: ServerProcess
  /** One per endpoint registered, in order. */
  receivers: WebhookReceiver[]
}

/** Registers `url` for `pet.created` on `storeUrl` as an operator does: `petstore webhooks add` of the build (with `--rate-limit` when given one). */
export async function registerEndpoint (storeUrl: string, url: string, rateLimit?: number): Promise<void> {
  const limit = rateLimit === undefined ? [] : ['--rate-limit', String(rateLimit)]
  await run(process.execPath, [join(PROJECT_ROOT, 'dist/bin/cli.js'), 'webhooks', 'add', url, '--events', 'pet.created', ...limit, '--json'],
    { cwd: PROJECT_ROOT, env: childEnv({ DATABASE_URL: storeUrl, ...WEBHOOK_ENV }), timeout: 30_000 })
}

/** Starts receivers with `behaviours` and registers an endpoint for each on `storeUrl`. */
export async function addReceivers (storeUrl: string, behaviours: readonly ReceiverBehaviour[]): Promise<WebhookReceiver[]> {
  const receivers = await startReceivers(behaviours)
  for (const [i, receiver] of receivers.entries()) {
    const behaviour = behaviours[i]
    await registerEndpoint(storeUrl, receiver.url, behaviour === undefined || behaviour === 'blackhole' ? undefined : behaviour.rateLimit)
  }
  return receivers
}

/**
 * A new empty store (the CLI migrates it), an endpoint for each of `behaviours`, and the service on it (production
 * defaults, {@link WEBHOOK_ENV}, `env`), warmed up: one create delivered to every receiver that answers. Everything
 * is stopped, closed and dropped after `work`.
 */
export async function withWebhookService<T> (context: BenchContext, kind: StoreKind, behaviours: readonly ReceiverBehaviour[], env: Record<string, string>,
  work: (setup: WebhookService) => Promise<T>): Promise<T> {
  const store = await scratchStore(kind, 'webhooks', context.pgServerUrl)
  const receivers: WebhookReceiver[] = []
  try {
    receivers.push(...await addReceivers(store.url, behaviours))
    const service = await startService(store.url, context.apiKey, { env: { ...WEBHOOK_ENV, ...env } })
    try {
      const warmUp = petIds(await burstCreates(service.baseUrl, context.headers, 1, 1))
      for (const [i, receiver] of receivers.entries()) {
        if (behaviours[i] === 'blackhole') continue
        if (!await receiver.waitForPets(warmUp, WARM_UP_TIMEOUT_MS)) throw new Error(`${kind}: the warm-up create was not delivered within ${WARM_UP_TIMEOUT_MS} ms`)
      }
      return await work({ kind, storeUrl: store.url, service, receivers })
    } finally {
      await stopServer(service)
    }
  } finally {
    await Promise.all(receivers.map(async (receiver) => await receiver.close()))
    await store.drop()
  }
}

/** Each created pet's time from its 201 to its event's first receipt (at least 0: the receipt may be read first); NaN for the ones never received. */
export function commitToReceiptMs (created: readonly Created[], receipts: readonly Receipt[]): number[] {
  const received = new Map<string, number>()
  for (const receipt of receipts) if (!received.has(receipt.petId)) received.set(receipt.petId, receipt.at)
  return created.filter((c) => c.status === 201).map((c) => {
    const at = received.get(c.petId)
    return at === undefined ? NaN : Math.max(0, at - c.answeredAt)
  })
}
