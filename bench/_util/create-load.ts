import { setTimeout as sleep } from 'node:timers/promises'
import { CREATE_BODY } from './plan.js'

/** One createPet: when it was sent and answered (the runner's `performance.now()`), its status (0: no answer) and the pet's id. */
export interface Created {
  sentAt: number
  answeredAt: number
  status: number
  petId: string
}

const CREATE_TIMEOUT_MS = 30_000

async function createPet (baseUrl: string, headers: Record<string, string>): Promise<Created> {
  const sentAt = performance.now()
  try {
    const response = await fetch(`${baseUrl}/v1/pets`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: CREATE_BODY,
      signal: AbortSignal.timeout(CREATE_TIMEOUT_MS)
    })
    const text = await response.text()
    const answeredAt = performance.now()
    const id = response.status === 201 ? (JSON.parse(text) as { id?: unknown }).id : undefined
    return { sentAt, answeredAt, status: response.status, petId: typeof id === 'number' || typeof id === 'string' ? String(id) : '' }
  } catch {
    return { sentAt, answeredAt: performance.now(), status: 0, petId: '' }
  }
}

/**
 * Creates at a steady `perSecond` for `seconds`, each sent on its schedule whether or not the ones before
 * it were answered (an open loop: a slow answer does not slow the load, so it shows in the latencies).
 */
export async function pacedCreates (baseUrl: string, headers: Record<string, string>, perSecond: number, seconds: number): Promise<Created[]> {
  const count = Math.round(perSecond * seconds)
  const intervalMs = 1000 / perSecond
  const started = performance.now()
  const pending: Array<Promise<Created>> = []
  for (let i = 0; i < count; i++) {
    const wait = started + i * intervalMs - performance.now()
    if (wait > 0) await sleep(wait)
    pending.push(createPet(baseUrl, headers))
  }
  return await Promise.all(pending)
}

/** `count` creates as fast as `connections` clients, each sending its next one when answered, get them done. */
export async function burstCreates (baseUrl: string, headers: Record<string, string>, count: number, connections = 50): Promise<Created[]> {
  const created: Created[] = []
  let next = 0
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < count) {
      next++
      created.push(await createPet(baseUrl, headers))
    }
  }))
  return created
}

/** The ids of the pets created (201s). */
export function petIds (created: readonly Created[]): Set<string> {
  return new Set(created.filter((c) => c.status === 201).map((c) => c.petId))
}

/** A `q` quantile (0 to 1) of `values`, nearest rank; NaN for none. */
export function quantile (values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * q) - 1))] ?? NaN
}
