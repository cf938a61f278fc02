/** A store method, as a wrapper sees it. */
export type StoreCall = (...args: unknown[]) => unknown

// calls that are not queries (or are synchronous), or that run once at start: never wrapped
const NOT_QUERIES = new Set<string>(['close', 'migrate', 'listVersion'])

/**
 * The store with every query method replaced by `wrap(call, name)` (for metrics, traces), made once
 * per method. Calls reach the store itself, whose private fields a proxy `this` cannot reach.
 */
export function wrapStoreCalls<S extends object> (store: S, wrap: (call: StoreCall, name: string) => StoreCall): S {
  const methods = new Map<string | symbol, StoreCall>()
  return new Proxy(store, {
    get (target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      let method = methods.get(property)
      if (method === undefined) {
        const bound = (value as StoreCall).bind(target)
        method = typeof property !== 'string' || NOT_QUERIES.has(property) ? bound : wrap(bound, property)
        methods.set(property, method)
      }
      return method
    }
  })
}
