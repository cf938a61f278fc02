import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { once } from 'node:events'
import type { TestContext } from 'node:test'

/** An answer the gateway gives itself instead of forwarding. */
export interface GatewayAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

export interface HttpGateway {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string
  /** The head of every request that reached the gateway, in order. */
  received: Array<{ method: string, url: string, headers: IncomingHttpHeaders }>
}

/**
 * An HTTP front on 127.0.0.1, like a load balancer before the service: for each request,
 * `intercept` may return an answer of its own (a 503 page, say); otherwise the request is
 * forwarded to the service on `targetPort` and its answer passed back. Closed when the test ends.
 */
export async function startHttpGateway (t: TestContext, targetPort: number,
  intercept: (request: IncomingMessage, index: number) => GatewayAnswer | undefined): Promise<HttpGateway> {
  const received: HttpGateway['received'] = []
  const server = createServer((request, response) => {
    received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers })
    const own = intercept(request, received.length - 1)
    if (own !== undefined) {
      request.resume()
      response.writeHead(own.status, own.headers).end(own.body)
      return
    }
    const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, method: request.method, path: request.url, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    upstream.on('error', () => { response.destroy() })
    request.pipe(upstream)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => { resolve() })
  }))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the gateway has no TCP address')
  return { baseUrl: `http://127.0.0.1:${address.port}/v1`, received }
}
