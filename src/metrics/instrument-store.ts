import type { Histogram } from 'prom-client'
import { wrapStoreCalls, type StoreCall } from '../store/wrap-store.js'

/** The store with every call timed into `histogram`, by method and outcome (ok or error). */
export function instrumentStore<S extends object> (store: S, histogram: Histogram<'method' | 'outcome'>): S {
  return wrapStoreCalls(store, (call, name) => timed(call, name, histogram))
}

function timed (call: StoreCall, name: string, histogram: Histogram<'method' | 'outcome'>): StoreCall {
  return async (...args: unknown[]) => {
    const end = histogram.startTimer({ method: name })
    try {
      const result = await call(...args)
      end({ outcome: 'ok' })
      return result
    } catch (error) {
      end({ outcome: 'error' })
      throw error
    }
  }
}
