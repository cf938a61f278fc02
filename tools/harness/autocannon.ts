import autocannon from 'autocannon'

/**
 * Runs autocannon in this process with `options` (a request that takes 10 s is a timeout, not a
 * latency figure, unless `options.timeout` says otherwise); aborting `signal` stops it early.
 */
export async function runAutocannon (options: autocannon.Options, signal?: AbortSignal): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ timeout: 10, ...options }, (error: unknown, result) => {
      signal?.removeEventListener('abort', stop)
      if (error !== null && error !== undefined) reject(error instanceof Error ? error : new Error('autocannon failed', { cause: error }))
      else resolve(result)
    })
    const stop = (): void => { instance.stop() }
    if (signal?.aborted === true) stop()
    else signal?.addEventListener('abort', stop, { once: true })
  })
}
