import type { HistogramSeries, TallyHistogram } from './tally.js'
import { wrapStoreCalls, type StoreCall } from '../runtime/wrap-store.js'

/** The store with every call timed into `histogram`, by method and outcome (ok or error). */
export function instrumentStore<S extends object> (store: S, histogram: TallyHistogram<'method' | 'outcome'>): S {
  return wrapStoreCalls(store, (call, name) => timed(call, name, histogram))
}

function timed (call: StoreCall, method: string, histogram: TallyHistogram<'method' | 'outcome'>): StoreCall {
  // made on first use: a series appears once it has a sample, as prom-client's do
  let ok: HistogramSeries | undefined
  let error: HistogramSeries | undefined
  return async (...args: unknown[]) => {
    const start = performance.now()
    try {
      const result = await call(...args)
      ;(ok ??= histogram.series({ method, outcome: 'ok' })).observe((performance.now() - start) / 1000)
      return result
    } catch (failure) {
      ;(error ??= histogram.series({ method, outcome: 'error' })).observe((performance.now() - start) / 1000)
      throw failure
    }
  }
}
