/** A store method, as a wrapper sees it. */
export type StoreCall = (...args: unknown[]) => unknown

// calls that are not queries (or are synchronous): never wrapped, only bound
const NOT_QUERIES = new Set<string>(['close', 'migrate', 'listVersion'])

/**
 * A plain object with the store's methods, each query method replaced by `wrap(call, name)` (for metrics,
 * traces): built once, at start-up, so a call costs one more function call and no look-up. Calls reach
 * the store itself, whose private fields only its own `this` can reach.
 */
export function wrapStoreCalls<S extends object> (store: S, wrap: (call: StoreCall, name: string) => StoreCall): S {
  const wrapped: Record<string, StoreCall> = {}
  for (const name of methodNames(store)) {
    const bound = (Reflect.get(store, name) as StoreCall).bind(store)
    wrapped[name] = NOT_QUERIES.has(name) ? bound : wrap(bound, name)
  }
  return wrapped as unknown as S
}

/** The names of the methods `store` has from its class (and its parents'), constructor left out. */
function methodNames (store: object): Set<string> {
  const names = new Set<string>()
  for (let prototype = Object.getPrototypeOf(store) as object | null; prototype !== null && prototype !== Object.prototype; prototype = Object.getPrototypeOf(prototype) as object | null) {
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name)
      if (name !== 'constructor' && typeof descriptor?.value === 'function') names.add(name)
    }
  }
  for (const name of Object.keys(store)) if (typeof Reflect.get(store, name) === 'function') names.add(name)
  return names
}
