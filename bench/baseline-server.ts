/**
 * The benchmark's baseline: a bare `node:http` server that answers every request, whatever its
 * method, path or headers, with 200 and one constant, pre-serialized JSON array of 20 pets — the
 * size and shape of a `GET /v1/pets?limit=20&status=available` page — but for the store's two
 * routes, which get an answer of their own shape, as constant: `POST /v1/store/orders` 201 and an
 * order, `GET /v1/store/inventory` 200 and the three counts. It measures what Node's HTTP stack and
 * the machine give at best, so the service's figures can be stated as a fraction of it.
 *
 * `PORT` (default 0: any free port) and `HOST` (default 127.0.0.1); prints `listening <port>` once ready.
 */
import { createServer, type OutgoingHttpHeaders } from 'node:http'

interface Answer { status: number, headers: OutgoingHttpHeaders, body: Buffer }

function answer (status: number, value: unknown): Answer {
  const body = Buffer.from(JSON.stringify(value), 'utf8')
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }, body }
}

const page = answer(200, Array.from({ length: 20 }, (_, i) => ({
  id: 99_000 + 3 * i,
  name: `Pet ${99_000 + 3 * i}`,
  categoryId: 1 + (i % 5),
  // every pet of the page it stands for is `available`, like the filtered list's
  status: 'available'
})))
const order = answer(201, { id: 7, petId: 100_001, status: 'placed', placedAt: '2026-11-25T09:31:12.500Z' })
const inventory = answer(200, { available: 50_000, pending: 20_000, sold: 30_000 })

function answerTo (method: string | undefined, url: string | undefined): Answer {
  if (url === '/v1/store/orders' && method === 'POST') return order
  if (url === '/v1/store/inventory' && method === 'GET') return inventory
  return page
}

const server = createServer((request, response) => {
  // drain any body (the mix and the orders send POSTs), then answer the constant answer of the route
  request.resume()
  const { status, headers, body } = answerTo(request.method, request.url)
  response.writeHead(status, headers)
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
