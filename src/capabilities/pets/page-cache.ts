import { LRUCache } from 'lru-cache'

/** A list page as sent: the serialized body and its `Link` header, if any. */
export interface CachedPage {
  /** What the route's response serializer made of the pets. */
  body: string | Buffer | ArrayBuffer
  link: string | undefined
}

interface Entry extends CachedPage {
  /** The store's list version the page was read at. */
  version: number
}

/** How long a page may be served from memory at most, whatever the store says (ms). */
export const PAGE_CACHE_MAX_AGE_MS = 1000

// at most 100 pets of at most ~470 bytes each: a full cache of 1000 pages stays under about 50 MB
const MAX_PAGES = 1000

/**
 * Hot list pages, kept serialized. A page is served from here only while the store's list
 * version is the one it was read at — any pet added since (here, or on another instance that
 * the store hears of) makes it stale — and never once it is older than {@link PAGE_CACHE_MAX_AGE_MS}.
 */
export class PageCache {
  readonly #pages: LRUCache<string, Entry>
  readonly #clock: { now (): number }
  // the reads under way, by version and key: a request for a page being read waits for that read
  readonly #reading = new Map<string, Promise<CachedPage>>()

  constructor (clock: { now (): number }) {
    this.#clock = clock
    this.#pages = new LRUCache<string, Entry>({ max: MAX_PAGES, ttl: PAGE_CACHE_MAX_AGE_MS, ttlResolution: 0, ttlAutopurge: false, perf: clock })
  }

  /**
   * The page at `key` and `version` that {@link get} did not have: from the read of it already under
   * way, or else from `read`, whose page is then kept. So one read per page and version reaches the store:
   * after a write, every client polling the first page would otherwise read it at once. A read that
   * fails fails every request waiting for it, as each would have on its own. With no version
   * (the store cannot tell one) every request reads for itself and nothing is kept.
   */
  async load (key: string, version: number | undefined, read: () => Promise<CachedPage>): Promise<CachedPage> {
    if (version === undefined) return await read()
    const flight = `${version} ${key}`
    let reading = this.#reading.get(flight)
    if (reading === undefined) {
      // the page's age counts from before the read began
      const readAt = this.#clock.now()
      reading = read().then((page) => {
        this.set(key, version, readAt, page)
        return page
      }).finally(() => { this.#reading.delete(flight) })
      this.#reading.set(flight, reading)
    }
    return await reading
  }

  get (key: string, version: number | undefined): CachedPage | undefined {
    if (version === undefined) return undefined
    const entry = this.#pages.get(key)
    return entry?.version === version ? entry : undefined
  }

  /** Keeps a page read at `version`; its age counts from `readAt` (before the read began). */
  set (key: string, version: number | undefined, readAt: number, page: CachedPage): void {
    if (version !== undefined) this.#pages.set(key, { ...page, version }, { start: readAt })
  }
}
