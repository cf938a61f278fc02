import fp from 'fastify-plugin'
import { ApiError } from '../errors/catalogue.js'

/** How long a client may take to send a whole request; shorter than the drain on SIGTERM. */
export const REQUEST_TIMEOUT_MS = 10_000

/**
 * The drain after SIGTERM (`app.close()`): requests that arrive on kept-alive connections are
 * turned away with a 503, answers close their connection, and an upload still stalled after
 * {@link REQUEST_TIMEOUT_MS} is cut, so the drain always ends.
 */
export const drainOnClose = fp(async (app) => {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
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
