import assert from 'node:assert/strict'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { join, normalize } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { generateApiKey, hashApiKey } from '../../src/capabilities/keys/api-keys.js'
import { testStores } from '../helpers/build-app.js'
import { launchChromium, SKIP_WITHOUT_CHROMIUM } from '../helpers/chromium.js'
import { clientOf, startService } from '../helpers/client-service.js'
import { PROJECT_ROOT } from '../helpers/processes.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

// what the page loads, as a site without a bundler serves the package: its built ES modules and its one dependency's
const SCRIPT_ROOTS: Readonly<Record<string, string>> = {
  '/client/': join(PROJECT_ROOT, 'clients', 'typescript', 'dist'),
  '/eventsource-parser/': join(PROJECT_ROOT, 'node_modules', 'eventsource-parser', 'dist')
}

/**
 * The storefront: it lists pets and follows the feed with a read key, and creates with a write key (its
 * back office), through `@petstore/client` as the page imports it. What it saw and every error it met stay
 * on `storefront` for the test to read.
 */
const STOREFRONT_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>storefront</title><link rel="icon" href="data:,">
<script type="importmap">{"imports": {"@petstore/client": "/client/index.js", "eventsource-parser/stream": "/eventsource-parser/stream.js"}}</script>
<script>
// Safari cannot iterate a ReadableStream with for await: neither can this page, so the client must do without
delete ReadableStream.prototype[Symbol.asyncIterator]
</script>
<script type="module">
import { createClient } from '@petstore/client'
let reader
let writer
let following
const describe = (error) => error?.code === undefined ? String(error) : error.code + ': ' + error.message
window.storefront = {
  seen: [],
  errors: [],
  start ({ baseUrl, readKey, writeKey }) {
    reader = createClient({ baseUrl, apiKey: readKey, retryBaseDelayMs: 50 })
    writer = createClient({ baseUrl, apiKey: writeKey, retryBaseDelayMs: 50 })
  },
  async create (name) {
    try { return (await writer.createPet({ name, categoryId: 1 })).name } catch (error) { return describe(error) }
  },
  async list () {
    try { return (await reader.listPets({ limit: 100 })).pets.map((pet) => pet.name) } catch (error) { return describe(error) }
  },
  follow () {
    following = new AbortController()
    void (async () => {
      try {
        for await (const event of reader.events.follow({ type: 'pet.created', signal: following.signal })) window.storefront.seen.push({ id: event.id, name: event.data.pet.name })
      } catch (error) { window.storefront.errors.push(describe(error)) }
    })()
  },
  stop () { following?.abort() }
}
</script></head><body>storefront</body></html>`

/** What the test calls on the page (`window.storefront`). */
interface Storefront {
  seen: Array<{ id: number, name: string }>
  errors: string[]
  start: (settings: { baseUrl: string, readKey: string, writeKey: string }) => void
  create: (name: string) => Promise<string>
  list: () => Promise<string[] | string>
  follow: () => void
  stop: () => void
}

/** Runs `work` in the page on its storefront: the function's source is sent, so it may use its arguments only. */
async function inPage<R, A = null> (page: Page, work: (storefront: Storefront, arg: A) => R | Promise<R>, arg?: A): Promise<R> {
  return await page.evaluate<R>(`(${work.toString()})(window.storefront, ${JSON.stringify(arg ?? null)})`)
}

/** Waits until `predicate` holds of the page's storefront, or it met an error (the assertions after say which). */
async function untilInPage (page: Page, what: string, predicate: (storefront: Storefront) => boolean): Promise<void> {
  try {
    await page.waitForFunction(`((storefront) => (${predicate.toString()})(storefront) || storefront.errors.length > 0)(window.storefront)`)
  } catch (error) {
    const { seen, errors } = await inPage(page, (storefront) => ({ seen: storefront.seen, errors: storefront.errors }))
    assert.fail(`${what}: ${String(error)}; the page saw ${JSON.stringify(seen)}, errors ${JSON.stringify(errors)}`)
  }
}

/** A static site on an origin of its own (a port of its own on 127.0.0.1): the page and the scripts it imports. */
async function startStaticSite (t: TestContext): Promise<string> {
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(STOREFRONT_PAGE)
      return
    }
    const prefix = Object.keys(SCRIPT_ROOTS).find((each) => path.startsWith(each))
    const root = prefix === undefined ? undefined : SCRIPT_ROOTS[prefix]
    const file = prefix === undefined || root === undefined ? undefined : normalize(join(root, path.slice(prefix.length)))
    if (file === undefined || root === undefined || !file.startsWith(root) || !file.endsWith('.js')) {
      response.writeHead(404).end()
      return
    }
    readFile(file).then((body) => { response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(body) },
      () => { response.writeHead(404).end() })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }))
  const address = server.address()
  assert.ok(address !== null && typeof address === 'object')
  return `http://127.0.0.1:${address.port}`
}

/** A stream request as it arrived at the service: from which page, and from where it resumed. */
interface StreamArrival {
  origin: string | undefined
  lastEventId: string | undefined
}

function recordStreamArrivals (arrivals: StreamArrival[]): (app: FastifyInstance) => void {
  return (app) => {
    app.addHook('onRequest', async (request) => {
      if (request.method !== 'GET' || !request.url.startsWith('/v1/events') || request.headers.accept !== 'text/event-stream') return
      arrivals.push({ origin: request.headers.origin, lastEventId: request.headers['last-event-id'] as string | undefined })
    })
  }
}

/** The page's own problems: script errors and what the console reported (a refused CORS request lands there). */
function collectPageErrors (page: Page): string[] {
  const errors: string[] = []
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  page.on('pageerror', (error) => { errors.push(error.message) })
  return errors
}

for (const store of testStores()) {
  describe(`@petstore/client in Chromium, on a page of another origin (${store})`, { skip: SKIP_WITHOUT_CHROMIUM }, () => {
    test('When a storefront creates with a write key, lists and follows with a read key, and its stream drops, then it gets every pet and every event once, resuming with Last-Event-ID', async (t) => {
      const site = await startStaticSite(t)
      const arrivals: StreamArrival[] = []
      const service = await startService(t, { store, env: { CORS_ORIGINS: site } }, recordStreamArrivals(arrivals))
      const readKey = generateApiKey()
      await service.app.keyStore.createApiKey('storefront', hashApiKey(readKey), 'read')
      // the page reaches the service through a proxy the test can cut: a dropped connection, as a train's tunnel drops it
      const proxy = await startTcpProxy(t, { host: '127.0.0.1', port: service.port })
      const backOffice = clientOf(service)
      const browser = await launchChromium(t)
      const page = await browser.newPage()
      page.setDefaultTimeout(15_000)
      const pageErrors = collectPageErrors(page)
      await page.goto(`${site}/`)
      await page.waitForFunction('window.storefront !== undefined')
      await inPage(page, (storefront, settings) => { storefront.start(settings) }, { baseUrl: `http://127.0.0.1:${proxy.port}/v1`, readKey, writeKey: service.key })

      assert.equal(await inPage(page, async (storefront) => await storefront.create('Rex')), 'Rex', 'the page created a pet with the write key')
      assert.deepEqual(await inPage(page, async (storefront) => await storefront.list()), ['Rex'], 'the page listed the pets with the read key')
      await inPage(page, (storefront) => { storefront.follow() })
      await untilInPage(page, 'the event of the pet created before', (storefront) => storefront.seen.length === 1)
      assert.equal(await inPage(page, async (storefront) => await storefront.create('Bella')), 'Bella')
      await untilInPage(page, 'the event of the pet created while following', (storefront) => storefront.seen.length === 2)

      proxy.cut('refuse')
      await backOffice.createPet({ name: 'Coco', categoryId: 1 })
      await backOffice.createPet({ name: 'Dina', categoryId: 1 })
      proxy.heal()
      await untilInPage(page, 'the events of the pets created while the connection was down', (storefront) => storefront.seen.length === 4)
      const { seen, errors } = await inPage(page, (storefront) => ({ seen: storefront.seen, errors: storefront.errors }))
      await inPage(page, (storefront) => { storefront.stop() })

      assert.deepEqual(errors, [], 'events.follow failed in the page')
      const feed = await backOffice.listEvents({ type: 'pet.created', limit: 100 })
      assert.deepEqual(seen, feed.events.map((event) => ({ id: event.id, name: event.type === 'pet.created' ? event.data.pet.name : '' })), 'every event once, in order')
      assert.ok(arrivals.length >= 2, `${arrivals.length} stream requests`)
      assert.ok(arrivals.every((arrival) => arrival.origin === site), 'every stream was asked for by the page, across origins')
      assert.equal(arrivals[0]?.lastEventId, undefined)
      assert.equal(arrivals.at(-1)?.lastEventId, String(seen[1]?.id), 'the stream that got through resumed after the last event the page had')
      assert.deepEqual(pageErrors.filter((error) => !/ERR_CONNECTION_RESET|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|network error/i.test(error)), [], 'the page reported errors')
    })
  })
}
