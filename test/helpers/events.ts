import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { OrderCreatedEvent, OrderUpdatedEvent } from '../../src/capabilities/orders/index.js'
import type { PetCreatedEvent, PetUpdatedEvent } from '../../src/capabilities/pets/index.js'
import type { TestApp } from './build-app.js'

/** Any event the app's producers record, precisely (the events capability itself knows only the envelope). */
export type Event = PetCreatedEvent | PetUpdatedEvent | OrderCreatedEvent | OrderUpdatedEvent
export type EventType = Event['type']

/** The path and query of an answer's `rel="next"` link (the feed always sends one). */
export function nextLinkOf (res: LightMyRequestResponse): string {
  const target = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link ?? ''))?.[1]
  assert.ok(target !== undefined, `no next link in ${JSON.stringify(res.headers.link)}`)
  const url = new URL(target)
  return url.pathname + url.search
}

/** One feed page at `url` (a path under /v1), which must be a 200. */
export async function eventPage (api: TestApp, url: string): Promise<{ events: Event[], next: string }> {
  const res = await api.app.inject({ method: 'GET', url, headers: api.auth })
  assert.equal(res.statusCode, 200, res.body)
  return { events: res.json(), next: nextLinkOf(res) }
}

/** Every event from `url` on, following `next` until a page comes back empty. */
export async function followFeed (api: TestApp, url = '/v1/events?limit=100'): Promise<{ events: Event[], next: string }> {
  const events: Event[] = []
  let page = await eventPage(api, url)
  while (page.events.length > 0) {
    events.push(...page.events)
    page = await eventPage(api, page.next)
  }
  return { events, next: page.next }
}
