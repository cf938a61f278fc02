import type { Histogram } from 'prom-client'
import type { PetStore } from '../store/pet-store.js'

// calls that are not queries (or are synchronous), or that run once at start
const UNTIMED = new Set<string | symbol>(['close', 'migrate', 'listVersion'])

type AnyMethod = (...args: unknown[]) => unknown

/** The store with every call timed into `histogram`, by method and outcome (ok or error). */
export function instrumentStore (store: PetStore, histogram: Histogram<'method' | 'outcome'>): PetStore {
  // made once per method; bound to the store itself, whose private fields a proxy `this` cannot reach
  const methods = new Map<string | symbol, AnyMethod>()
  return new Proxy(store, {
    get (target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      let method = methods.get(property)
      if (method === undefined) {
        const bound = (value as AnyMethod).bind(target)
        method = UNTIMED.has(property) || typeof property !== 'string' ? bound : timed(bound, property, histogram)
        methods.set(property, method)
      }
      return method
    }
  })
}

function timed (call: AnyMethod, name: string, histogram: Histogram<'method' | 'outcome'>): AnyMethod {
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
