import fp from 'fastify-plugin'
import { REQUEST_ID_HEADER } from './request-id.js'
import { SECURITY_HEADERS } from './security.js'

/**
 * The one place that writes the headers every answer carries: its request id and the security
 * headers. First of all hooks, so an answer refused early (a missing Host, a bad key, a drain) carries
 * them too; a callback, not a promise, because it runs on every request.
 */
export const answerHeaders = fp(async (app) => {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS).header(REQUEST_ID_HEADER, request.id)
    done()
  })
}, { name: 'petstore-answer-headers' })
