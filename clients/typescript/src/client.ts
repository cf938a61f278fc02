import { categoryOperations, type CategoryOperations } from './categories.js'
import { getPetDeprecationWarning } from './deprecation.js'
import { endpoint, expectShape, isObject } from './answers.js'
import { findLink } from './link-header.js'
import { orderOperations, type OrderOperations } from './orders.js'
import { checkPollInterval, resolveOptions, type ClientOptions, type RequestOptions } from './options.js'
import { followEvents } from './follow.js'
import { send } from './transport.js'
import { webhookEndpointOperations, type WebhookEndpointOperations } from './webhook-endpoints.js'
import type { EventPage, Int64, ListEventsQuery, ListPetsQuery, NewPet, Pet, PetPage, PetPatch, PetStoreEvent, UpdatedPet } from './types.js'

/** Options of `createPet`. */
export interface CreatePetOptions extends RequestOptions {
  /**
   * Identifies this pet across retries (1 to 255 visible ASCII characters, e.g. a UUID; default: a
   * new random UUID per call). Pass your own to make a create safe to repeat across process
   * restarts: within 24 hours, the same key and body give the first answer again, creating nothing.
   */
  idempotencyKey?: string
}

/** Options of `updatePet`. */
export interface UpdatePetOptions extends RequestOptions {
  /**
   * Makes the change conditional (`If-Match`): an `etag` from an earlier `updatePet` (or `*`). When the
   * pet has changed since, nothing changes and the call fails with 412 `precondition_failed`.
   */
  ifMatch?: string
}

/** The query of `pets.all`: the status filter and the page size (every page is fetched). */
export type AllPetsQuery = Omit<ListPetsQuery, 'cursor'>

/** What `events.follow` takes: where to start, the type filter and page size, the signal that ends it and the pause between polls. */
export interface FollowEventsOptions extends ListEventsQuery {
  /** Ends the iteration: it returns (without throwing) as soon as the signal aborts, also during a request or a pause. */
  signal: AbortSignal
  /**
   * false: poll pages only, never ask for a stream (e.g. behind a proxy that buffers responses). Default
   * true: follow the Server-Sent Events stream, polling only where it is refused.
   */
  stream?: boolean
  /** While polling (where streaming is refused, or with `stream: false`): how long to wait after an empty page before asking again, in ms (default: the client's `eventPollIntervalMs`, 1000). */
  pollIntervalMs?: number
}

/** A client of the Pet Store API v1 (the order operations are in {@link OrderOperations}); create it with {@link createClient}. */
export interface PetStoreClient extends OrderOperations {
  /**
   * One page of pets, in `id` order (`limit` 1–100, default 20), optionally only those with
   * `status`. Retried like every call (GETs are safe to repeat).
   */
  listPets (query?: ListPetsQuery, options?: RequestOptions): Promise<PetPage>
  /**
   * Adds a pet and returns it with its `id`. Always sends an `Idempotency-Key` and reuses it on
   * every retry, so a create that is retried after a lost answer never adds the pet twice.
   */
  createPet (pet: NewPet, options?: CreatePetOptions): Promise<Pet>
  /**
   * One pet by id.
   * @deprecated The service removes `GET /pets/{petId}` on 2030-12-05 (then it answers 410
   * `gone`); use {@link PetStoreClient.listPets} with the `status` filter instead. The first call
   * of each client emits a deprecation warning naming the sunset date.
   */
  getPet (petId: Int64, options?: RequestOptions): Promise<Pet>
  /**
   * Changes the fields `patch` names (beta). `status` moves only as the service allows
   * (`available` ↔ `pending`, either → `sold`; `sold` is final), else 409 `invalid_transition`;
   * `{}` changes nothing and answers the pet with its current `etag`. Retried like every call: the
   * patch states the wanted values, so a repeat changes nothing more. With `ifMatch`, a retry of a
   * change that was made but whose answer was lost fails with 412, since the tag changed.
   */
  updatePet (petId: Int64, patch: PetPatch, options?: UpdatePetOptions): Promise<UpdatedPet>
  /**
   * One page of the change feed (beta): at most `limit` events (1–100, default 20) with an id above
   * `after` (left out: from the oldest event still retained), in `id` order, optionally only those of
   * `type` (one type or a list of them), and `nextAfter`, the position to ask for next. Fails with 410 `events_expired` when events
   * after `after` were already deleted by retention: resynchronize from `listPets`, then follow again.
   */
  listEvents (query?: ListEventsQuery, options?: RequestOptions): Promise<EventPage>
  /**
   * One event by id (beta), as `listEvents` and `events.follow` yield it: to look up the event a webhook delivery
   * (`webhook-id`) or a stream message named. Fails with 404 `event_not_found` when no event was recorded with the id,
   * and 410 `events_expired` when retention deleted it.
   */
  getEvent (eventId: number, options?: RequestOptions): Promise<PetStoreEvent>
  /** Helpers over the pet collection. */
  readonly pets: {
    /** Every pet (with `status`, every pet that has it), page after page, following the `next` links. */
    all (query?: AllPetsQuery, options?: RequestOptions): AsyncGenerator<Pet, void, undefined>
  }
  /** The webhook endpoints and their deliveries (beta; admin keys only). */
  readonly webhookEndpoints: WebhookEndpointOperations
  /** The categories pets carry, their names and their pets by status (beta). */
  readonly categories: CategoryOperations
  /** Helpers over the change feed (beta). */
  readonly events: {
    /**
     * Every event after `after` (left out: from the oldest retained), each once and in `id` order,
     * until `signal` aborts: then the iteration ends without an error. It follows the feed's
     * Server-Sent Events stream, which the service pushes each change to as it commits; when the
     * connection drops (or stays silent, heartbeats included, for `timeoutMs`) it connects again with
     * `Last-Event-ID`, the last event it yielded, so nothing is missed or seen twice. Where the service
     * refuses a stream (406, or 429/503 at its cap on open streams) it polls pages instead, every
     * `pollIntervalMs` after an empty one, and asks for a stream again a minute later. Connecting and
     * each page are retried like every call; an error that outlasts the retries, or a 410
     * `events_expired`, is thrown.
     * @throws TypeError at once when `signal` or `pollIntervalMs` is invalid.
     */
    follow (options: FollowEventsOptions): AsyncGenerator<PetStoreEvent, void, undefined>
  }
}

/**
 * A client for the service at `options.baseUrl`. It holds no connection of its own (the fetch
 * implementation pools them); create one per process and share it.
 * @throws TypeError when an option is invalid.
 */
export function createClient (options: ClientOptions): PetStoreClient {
  const settings = resolveOptions(options)
  let warnedGetPet = false

  const listPets = async (query: ListPetsQuery = {}, requestOptions: RequestOptions = {}): Promise<PetPage> => {
    const url = endpoint(settings, '/pets')
    for (const name of ['limit', 'status', 'cursor'] as const) {
      const value = query[name]
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const answer = await send(settings, { operation: 'listPets', method: 'GET', url, signal: requestOptions.signal })
    const pets = expectShape(Array.isArray(answer.body), answer.body as Pet[], 'listPets', answer)
    const next = findLink(answer.response.headers.get('link'), 'next', answer.response.url || url.href)
    if (next === undefined) return { pets }
    // pages are asked for at baseUrl with the link's cursor, so the key only ever goes where the caller pointed it
    const nextCursor = next.searchParams.get('cursor')
    return { pets, nextCursor: expectShape(nextCursor !== null && nextCursor !== '', nextCursor as string, 'listPets', answer) }
  }

  const listEvents = async (query: ListEventsQuery = {}, requestOptions: RequestOptions = {}): Promise<EventPage> => {
    const url = endpoint(settings, '/events')
    for (const name of ['after', 'limit'] as const) {
      const value = query[name]
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    for (const type of typeof query.type === 'string' ? [query.type] : query.type ?? []) url.searchParams.append('type', type)
    const answer = await send(settings, { operation: 'listEvents', method: 'GET', url, signal: requestOptions.signal })
    const events = expectShape(Array.isArray(answer.body), answer.body as PetStoreEvent[], 'listEvents', answer)
    const next = findLink(answer.response.headers.get('link'), 'next', answer.response.url || url.href)
    // only the link's position is kept: the next page is asked for at baseUrl, like listPets' cursor
    const nextAfter = parsePosition(next?.searchParams.get('after'))
    return { events, nextAfter: expectShape(nextAfter !== undefined, nextAfter as number, 'listEvents', answer) }
  }

  return {
    ...orderOperations(settings),
    webhookEndpoints: webhookEndpointOperations(settings),
    categories: categoryOperations(settings),
    listPets,
    listEvents,

    async getEvent (eventId, { signal } = {}) {
      const answer = await send(settings, { operation: 'getEvent', method: 'GET', url: endpoint(settings, `/events/${encodeURIComponent(String(eventId))}`), signal })
      return expectShape(isObject(answer.body), answer.body as PetStoreEvent, 'getEvent', answer)
    },

    async createPet (pet, { idempotencyKey = globalThis.crypto.randomUUID(), signal } = {}) {
      const answer = await send(settings, {
        operation: 'createPet',
        method: 'POST',
        url: endpoint(settings, '/pets'),
        body: pet,
        headers: { 'idempotency-key': idempotencyKey },
        signal
      })
      return expectShape(isObject(answer.body), answer.body as Pet, 'createPet', answer)
    },

    async getPet (petId, { signal } = {}) {
      const answer = await send(settings, {
        operation: 'getPet',
        method: 'GET',
        url: endpoint(settings, `/pets/${encodeURIComponent(String(petId))}`),
        signal,
        onAnswer: (response) => {
          if (warnedGetPet) return
          warnedGetPet = true
          settings.onWarning(getPetDeprecationWarning(response))
        }
      })
      return expectShape(isObject(answer.body), answer.body as Pet, 'getPet', answer)
    },

    async updatePet (petId, patch, { ifMatch, signal } = {}) {
      const answer = await send(settings, {
        operation: 'updatePet',
        method: 'PATCH',
        url: endpoint(settings, `/pets/${encodeURIComponent(String(petId))}`),
        body: patch,
        contentType: 'application/merge-patch+json',
        headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
        signal
      })
      const etag = answer.response.headers.get('etag')
      return expectShape(isObject(answer.body) && etag !== null, { pet: answer.body as Pet, etag: etag as string }, 'updatePet', answer)
    },

    pets: {
      async * all (query = {}, options = {}) {
        let cursor: string | undefined
        do {
          const page: PetPage = await listPets(cursor === undefined ? query : { ...query, cursor }, options)
          yield * page.pets
          cursor = page.nextCursor
        } while (cursor !== undefined)
      }
    },

    events: {
      follow ({ signal, pollIntervalMs = settings.eventPollIntervalMs, stream = true, ...query }) {
        // checked here rather than on the first next(), so a wrong call fails where it is made
        if (!(signal instanceof AbortSignal)) throw new TypeError('events.follow needs a signal (an AbortController\'s) to end it')
        if (typeof stream !== 'boolean') throw new TypeError(`stream must be true or false; got ${String(stream)}`)
        const readPage = async (page: ListEventsQuery, pageSignal: AbortSignal): Promise<EventPage> => await listEvents(page, { signal: pageSignal })
        return followEvents(settings, readPage, query, { signal, pollIntervalMs: checkPollInterval('pollIntervalMs', pollIntervalMs), stream })
      }
    }
  }
}

/** A feed position from a link: plain decimal digits, an exact integer; undefined otherwise. */
function parsePosition (value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || !/^\d{1,16}$/.test(value)) return undefined
  const position = Number(value)
  return Number.isSafeInteger(position) ? position : undefined
}
