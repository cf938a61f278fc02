import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { wrapStoreCalls, type StoreCall } from '../../../src/infra/runtime/wrap-store.js'

class Base {
  readonly #rows = ['a']
  async countRows (): Promise<number> {
    return this.#rows.length
  }
}

class Store extends Base {
  readonly #secret = 's'
  async findSecret (): Promise<string> {
    return this.#secret
  }

  listVersion (): number {
    return 7
  }

  async close (): Promise<void> {}
}

describe('wrapStoreCalls', () => {
  test('When a store is wrapped, then every query method (its class\'s and its parents\') goes through the wrapper once per call and reaches the store\'s private fields; listVersion and close are only bound', async () => {
    const calls: string[] = []
    const made: string[] = []
    const wrapped = wrapStoreCalls(new Store(), (call: StoreCall, name: string) => {
      made.push(name)
      return (...args: unknown[]) => { calls.push(name); return call(...args) }
    })

    assert.equal(await wrapped.findSecret(), 's')
    assert.equal(await wrapped.countRows(), 1)
    assert.equal(wrapped.listVersion(), 7)
    await wrapped.close()
    assert.equal(await wrapped.findSecret(), 's')

    assert.deepEqual(made.sort(), ['countRows', 'findSecret'], 'the wrappers are made once, at wrapping, for the queries only')
    assert.deepEqual(calls, ['findSecret', 'countRows', 'findSecret'])
  })

  test('When a wrapped call is made, then no Proxy stands between: the wrapper is a plain own property', () => {
    const wrapped = wrapStoreCalls(new Store(), (call) => call)

    assert.equal(typeof Object.getOwnPropertyDescriptor(wrapped, 'findSecret')?.value, 'function')
    assert.equal(Object.getPrototypeOf(wrapped), Object.prototype)
  })
})
