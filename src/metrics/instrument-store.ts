import type { TallyHistogram } from './tally.js'
import { wrapStoreCalls, type StoreCall } from '../store/wrap-store.js'

/** The store with every call timed into `histogram`, by method and outcome (ok or error). */
export function instrumentStore<S extends object> (store: S, histogram: TallyHistogram<'method' | 'outcome'>): S {
  return wrapStoreCalls(store, (call, name) => timed(call, name, histogram))
}

function timed (call: StoreCall, method: string, histogram: TallyHistogram<'method' | 'outcome'>): StoreCall {
  const ok = { method, outcome: 'ok' }
  const error = { method, outcome: 'error' }
  return async (...args: unknown[]) => {
    const start = performance.now()
    try {
      const result = await call(...args)
      histogram.observe(ok, (performance.now() - start) / 1000)
      return result
    } catch (failure) {
      histogram.observe(error, (performance.now() - start) / 1000)
      throw failure
    }
  }
}
