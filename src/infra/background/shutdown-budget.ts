import { MAX_STOP_GRACE_MS } from './background-loop.js'
import { REQUEST_TIMEOUT_MS } from '../http/drain.js'

// closing the store, exporting the last spans (tracing's SHUTDOWN_EXPORT_MS), and the last store call of a
// pass cut off at the end of its grace (a lease given back): one statement each, well inside this
const CLOSE_MS = 3_000

/**
 * The shutdown after SIGTERM (or SIGINT), one order within one budget; `bin/server.ts` forces the exit,
 * with code 1, when the budget runs out.
 *
 * 1. HTTP (`app.close()`, http/drain.ts): no new connection; requests in flight finish, those arriving
 *    on kept-alive connections get a 503, and whatever is left after {@link REQUEST_TIMEOUT_MS} is cut.
 * 2. Background work, all at once (background-work.ts): no new pass; a pass in flight finishes, or is
 *    aborted after its loop's grace (at most {@link MAX_STOP_GRACE_MS}), and ends.
 * 3. The store, then the tracer, close.
 */
export const SHUTDOWN_BUDGET_MS = REQUEST_TIMEOUT_MS + MAX_STOP_GRACE_MS + CLOSE_MS
