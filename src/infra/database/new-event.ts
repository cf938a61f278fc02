/**
 * An event as a change hands it to the outbox writer of its engine (`postgres/postgres-outbox.ts`,
 * `sqlite/sqlite-outbox.ts`): its type, registered by the capability that owns it, and its `data`,
 * which the writer serializes exactly (int64 values beyond 2^53 as bigints).
 */
export interface NewEvent {
  readonly type: string
  readonly data: unknown
}
