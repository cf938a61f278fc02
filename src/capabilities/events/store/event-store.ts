import type { Event, EventType } from '../event-types.js'

/** One page of the change feed, in id order, starting after `afterId`. */
export interface EventPageQuery {
  /** Exclusive; 0 reads from the oldest retained event. */
  afterId: number
  limit: number
  /** Only events of these types; left out: of every type. */
  types?: readonly EventType[] | undefined
}

export interface EventPage {
  events: Event[]
  /**
   * The highest id retention ever deleted (of the query's types, when it has some; 0: none), read from the
   * snapshot `events` were read from: a reader whose `afterId` is below it has missed events, and must be
   * told so rather than given the page.
   */
  purgedThrough: number
}

/**
 * One event looked up by id: the event as a feed page holds it, or, when no event has the id, the highest id
 * retention ever deleted (of any type; 0: none), read after the miss: an id at or below it was deleted (ids
 * are deleted as a prefix), one above it was never recorded.
 */
export type EventLookup = { found: true, event: Event } | { found: false, purgedThrough: number }

/** What one retention pass did. */
export interface EventPurge {
  deleted: number
  /** The highest id deleted so far, by this pass or an earlier one (0: none). */
  purgedThrough: number
}

/**
 * The change feed as stored. Events are written by the store of each capability that records them, in the
 * transaction of each change (a transactional outbox); this interface reads them and applies retention.
 */
export interface EventStore {
  listEvents (query: EventPageQuery): Promise<EventPage>
  /** The event with id `id`, or what retention says of its absence. */
  findEvent (id: number): Promise<EventLookup>
  /** The smallest retained id, or undefined when no event is retained. */
  oldestEventId (): Promise<number | undefined>
  /** The highest id committed so far, retained or deleted by retention (0: none yet): where a consumer of what comes next starts. */
  newestEventId (): Promise<number>
  /**
   * Deletes the events that occurred before `cutoff`, oldest first and as a prefix of the ids (an
   * event is kept while an older one is), at most `batchSize` in one transaction. Safe to run on
   * every instance at once.
   */
  purgeEventsBefore (cutoff: Date, batchSize: number): Promise<EventPurge>
}
