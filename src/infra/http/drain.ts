import type { Socket } from 'node:net'
import fp from 'fastify-plugin'
import { ApiError } from '../errors/catalogue.js'

/** How long a client may take to send a whole request; shorter than the drain on SIGTERM. */
export const REQUEST_TIMEOUT_MS = 10_000

/**
 * The drain after SIGTERM (`app.close()`): requests that arrive on kept-alive connections are
 * turned away with a 503, answers close their connection, an upload still stalled after
 * {@link REQUEST_TIMEOUT_MS} is cut, and connections that never sent a byte are closed once no
 * other connection is left, so the drain always ends, and ends as soon as its requests are answered.
 */
export const drainOnClose = fp(async (app) => {
  let closing = false
  // every open connection: those that have sent nothing yet are a client's spares (fetch opens one after an
  // aborted answer, browsers preconnect). Node counts them as busy and closes only idle kept-alive ones, so
  // one would hold the drain until the cut below; they are closed as soon as nothing else is left to finish
  const connections = new Set<Socket>()
  const closeSilentWhenAlone = (): void => {
    for (const socket of connections) if (socket.bytesRead > 0) return
    for (const socket of connections) socket.destroy()
  }
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket)
    socket.once('close', () => {
      connections.delete(socket)
      if (closing) closeSilentWhenAlone()
    })
  })
  app.addHook('preClose', async () => {
    closing = true
    closeSilentWhenAlone()
    // Node stops enforcing requestTimeout once the server closes: a stalled upload would hold the drain forever
    setTimeout(() => { app.server.closeAllConnections() }, REQUEST_TIMEOUT_MS).unref()
  })
  // a kept-alive connection would otherwise hold the drain open until the client hangs up
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? new ApiError('service_unavailable', 'The service is shutting down; retry on another instance.') : undefined)
  })
}, { name: 'petstore-drain' })
