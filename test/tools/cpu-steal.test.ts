import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { cpuTicks, parseProcStat, stealPercent } from '../../tools/harness/cpu-steal.js'
import { stealNotes } from '../../bench/_util/steal-note.js'
import type { Measurement } from '../../bench/_util/measure.js'

// the head of a real /proc/stat (user nice system idle iowait irq softirq steal guest guest_nice)
const SAMPLE = `cpu  1000 0 300 8000 100 0 50 550 0 0
cpu0 600 0 100 3900 50 0 30 50 0 0
cpu1 400 0 200 4100 50 0 20 500 0 0
intr 12345 0 0
ctxt 999`

describe('the hypervisor\'s steal, from /proc/stat', () => {
  test('When /proc/stat is parsed, then each CPU\'s steal is its eighth field and its total the first eight summed, other lines ignored', () => {
    const cpus = parseProcStat(SAMPLE)
    assert.deepEqual([...cpus.keys()], ['cpu', 'cpu0', 'cpu1'])
    assert.deepEqual(cpus.get('cpu1'), { steal: 500, total: 5270 })
    assert.deepEqual(cpus.get('cpu'), { steal: 550, total: 10000 })
  })

  test('When two readings are compared, then steal is the share of the ticks between them, per CPU, and undefined where none passed', () => {
    const before = parseProcStat(SAMPLE)
    const after = parseProcStat(SAMPLE.replace('cpu1 400 0 200 4100 50 0 20 500', 'cpu1 460 0 220 4110 50 0 20 510'))
    assert.equal(stealPercent(before, after, '1'), 100 * 10 / 100)
    assert.equal(stealPercent(before, after, '0'), undefined, 'no tick passed on CPU 0')
    assert.equal(stealPercent(before, after, '7'), undefined, 'no such CPU')
  })

  test('When this machine\'s /proc/stat is read around some work, then every CPU has ticks and its steal is a share between 0 and 100', async () => {
    const before = cpuTicks()
    const until = Date.now() + 60
    while (Date.now() < until) { /* on a CPU for a few ticks */ }
    await new Promise((resolve) => setTimeout(resolve, 40))
    const after = cpuTicks()
    assert.ok(after.has('cpu') && after.has('cpu0'), [...after.keys()].join(', '))
    const share = stealPercent(before, after, '')
    assert.ok(share !== undefined && share >= 0 && share <= 100, String(share))
  })

  test('When the runs of a report carry steal, then its note gives the median and the largest on each CPU; without any, no note', () => {
    const run = (server: number, loadGenerator: number): Measurement => ({
      reqPerSec: 1, cpuUsPerRequest: 1, latencyMs: { p50: 1, p90: 1, p99: 1 }, requests: 1, non2xx: 0, errors: 0, rssMaxMb: undefined, stealPercent: { server, loadGenerator }
    })
    const [note] = stealNotes([{ service: [run(1, 4), run(3, 12)], bare: [run(2, 8)] }])
    assert.match(note ?? '', /3 timed runs: of the servers' CPU median 2\.0 %, largest 3\.0 %; of the load generator's median 8\.0 %, largest 12\.0 %/)
    const { stealPercent: _left, ...without } = run(0, 0)
    assert.deepEqual(stealNotes([{ service: [without] }]), [])
  })
})
