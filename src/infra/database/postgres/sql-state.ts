/**
 * Whether `error` is PostgreSQL's refusal with SQLSTATE `code` (five characters; the driver's DatabaseError carries it
 * as `code`, where Node's own errors carry `E…` names). Loads no driver, unlike `errors.ts`, so an engine's store module,
 * which every instance loads whatever its engine, may import it.
 */
export function hasSqlState (error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code
}
