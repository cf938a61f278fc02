import { createServer, type Server } from 'node:http'

/** What serves the text: one process's registry, or the cluster primary's aggregate of its workers. */
export interface MetricsSource {
  readonly contentType: string
  metrics (): Promise<string>
}

interface ErrorLog {
  error (context: object, message: string): void
}

/**
 * Serves `GET /metrics` in the Prometheus text format on a listener of its own, so the metrics
 * port can stay inside the cluster while the API port faces clients. No key is needed.
 */
export async function startMetricsServer (source: MetricsSource, port: number, host: string, log: ErrorLog): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics are at GET /metrics\n')
      return
    }
    source.metrics().then((text) => {
      response.writeHead(200, { 'content-type': source.contentType }).end(text)
    }, (error: unknown) => {
      log.error({ err: error }, 'could not collect metrics')
      response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('could not collect metrics\n')
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return server
}
