import fp from 'fastify-plugin'
import { hostHeaderProblem } from './host-header.js'
import { REQUEST_ID_HEADER } from './request-id.js'
import { SECURITY_HEADERS } from './security.js'

/**
 * The first of all hooks: it writes the headers every answer carries (its request id and the security
 * headers), so an answer refused early (a missing Host, a bad key, a drain) carries them too, then
 * refuses a request whose `Host` is missing or repeated (host-header.ts). One callback for both, not
 * a promise and not two hooks, because it runs on every request.
 */
export const answerHeaders = fp(async (app) => {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS).header(REQUEST_ID_HEADER, request.id)
    done(hostHeaderProblem(request))
  })
}, { name: 'petstore-answer-headers' })
