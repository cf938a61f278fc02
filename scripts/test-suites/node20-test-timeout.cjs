'use strict'
/*
 * Node 20 only: gives every test and hook of a file's process a time limit, `--test-timeout` (which
 * scripts/run-test-suites.ts passes), as Node 22 and later do for each file run() starts. Node 20's
 * node:test reads that flag only in `node --test`'s own process and applies run()'s `timeout` to the
 * file's process as a whole, so a test without a `timeout` of its own had none. As later Nodes: a test's
 * or hook's own `timeout` wins, a suite gets none (its tests each have theirs), a subtest gets the limit
 * rather than its parent's. Loaded with --expose-internals: the limit must be set where node:test
 * creates a test, which no public API reaches without moving each test's reported location.
 */
const { getOptionValue } = require('internal/options')
const { Suite, Test } = require('internal/test_runner/test')

const timeout = getOptionValue('--test-timeout')
if (!(Number.isInteger(timeout) && timeout > 0)) throw new Error(`node20-test-timeout: --test-timeout must be a positive integer, got ${timeout}`)
const { createHook, createSubtest } = Test.prototype
if (typeof createHook !== 'function' || typeof createSubtest !== 'function') {
  throw new Error(`node20-test-timeout: node:test ${process.version} has no Test#createSubtest or Test#createHook; this shim is for Node 20`)
}

// (fn), (options, fn), (name, fn) and (name, options, fn), as createSubtest itself reads them
Test.prototype.createSubtest = function (Factory, name, options, fn, overrides) {
  const own = name !== null && typeof name === 'object' ? name : options !== null && typeof options === 'object' ? options : undefined
  const isSuite = Factory === Suite || Factory.prototype instanceof Suite
  return createSubtest.call(this, Factory, name, options, fn, isSuite || own?.timeout != null ? overrides : { ...overrides, timeout })
}

Test.prototype.createHook = function (name, fn, options) {
  return createHook.call(this, name, fn, options?.timeout != null ? options : { ...options, timeout })
}
