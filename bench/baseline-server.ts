/**
 * The benchmark's baseline: a bare `node:http` server that answers every request, whatever its
 * method, path or headers, with 200 and one constant, pre-serialized JSON array of 20 pets — the
 * size and shape of a `GET /v1/pets?limit=20&status=available` page. It measures what Node's HTTP
 * stack and the machine give at best, so the service's figures can be stated as a fraction of it.
 *
 * `PORT` (default 0: any free port) and `HOST` (default 127.0.0.1); prints `listening <port>` once ready.
 */
import { createServer } from 'node:http'

const body = Buffer.from(JSON.stringify(Array.from({ length: 20 }, (_, i) => ({
  id: 99_000 + 3 * i,
  name: `Pet ${99_000 + 3 * i}`,
  categoryId: 1 + (i % 5),
  // every pet of the page it stands for is `available`, like the filtered list's
  status: 'available'
}))), 'utf8')

const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }

const server = createServer((request, response) => {
  // drain any body (the mix sends POSTs), then answer the same constant page
  request.resume()
  response.writeHead(200, headers)
  response.end(body)
})

server.keepAliveTimeout = 72_000
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : String(address)}\n`)
})

const stop = (): void => { server.close(() => { process.exit(0) }); server.closeAllConnections() }
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
