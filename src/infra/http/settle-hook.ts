import type { HookHandlerDoneFunction } from 'fastify'

/**
 * Runs a hook's work that is synchronous most of the time and sometimes waits (a promise), and calls
 * `done` once it has settled, with what it threw or rejected with. Fastify's async hooks cost a promise
 * and a microtask on every request even when nothing waits.
 */
export function settleHook (work: () => void | Promise<void>, done: HookHandlerDoneFunction): void {
  let pending: void | Promise<void>
  try {
    pending = work()
  } catch (error) {
    done(error as Error)
    return
  }
  if (pending instanceof Promise) pending.then(() => { done() }, done)
  else done()
}
