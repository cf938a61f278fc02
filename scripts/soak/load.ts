/** The load itself: the mix through autocannon, the kinds that close their connection on connections of their own. */
import type autocannon from 'autocannon'
import { runAutocannon } from '../../tools/harness/autocannon.js'
import { CLOSING_CONNECTIONS, CLOSING_RATE, type Mix } from './request-mix.js'

/** What autocannon measured, per group of connections. */
export interface LoadResult {
  /** The main connections: every kind that keeps its connection; the latency figures come from here. */
  main: autocannon.Result
  /** The connection(s) sending the kinds the server answers with Connection: close. */
  closing: autocannon.Result | undefined
}

/** Runs the mix for `durationSeconds`; aborting `signal` stops it early. */
export async function runLoad (baseUrl: string, mix: Mix, durationSeconds: number, connections: number, signal: AbortSignal | undefined): Promise<LoadResult> {
  const closingKinds = mix.kinds.filter((kind) => kind.closesConnection === true)
  const [main, closing] = await Promise.all([
    runAutocannon({ url: baseUrl, connections, duration: durationSeconds, requests: mix.requests(mix.kinds.filter((kind) => kind.closesConnection !== true)) }, signal),
    closingKinds.length === 0
      ? undefined
      : runAutocannon({ url: baseUrl, connections: CLOSING_CONNECTIONS, connectionRate: CLOSING_RATE, duration: durationSeconds, requests: mix.requests(closingKinds) }, signal)
  ])
  return { main, closing }
}
