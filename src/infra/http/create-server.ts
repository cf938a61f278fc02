import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config/config.js'
import { loggerOptions, RequestLogController, type LogStream } from '../logging/logging.js'
import type { Tracing } from '../tracing/tracing.js'
import { handleClientError } from './client-errors.js'
import { BODY_LIMIT_BYTES } from './content-types.js'
import { REQUEST_TIMEOUT_MS } from './drain.js'
import { handleError } from './error-handler.js'
import { requestIdFor } from './request-id.js'
import { buildSerializer } from './serialization.js'
import { buildValidator } from './validation.js'

/** The Fastify instance every capability is registered on: its logger, limits, parsers and compilers. */
export function createServer (config: Config, logStream: LogStream | undefined, tracing: Tracing | undefined) {
  return Fastify({
    logger: loggerOptions(config.logLevel, logStream),
    logController: new RequestLogController(tracing?.traceIdOf),
    // a valid incoming X-Request-Id is kept (a proxy's or a client's), else one is generated
    genReqId: requestIdFor,
    requestIdHeader: false,
    // a number of hops is passed as the equivalent function: Fastify's types take no number
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    // a whole request must arrive within this; a stalled upload cannot hold a connection (or a drain) open.
    // Node only enforces it when the server is created with it, hence the http options as well
    requestTimeout: REQUEST_TIMEOUT_MS,
    // a request without Host gets an Error body (host-header.ts) instead of Node's bare 400
    http: { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000, requireHostHeader: false },
    // long enough that an over-long id reaches auth and validation instead of failing in the router
    routerOptions: { maxParamLength: 1000 },
    clientErrorHandler: handleClientError,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    schemaController: { compilersFactory: { buildValidator, buildSerializer } },
    frameworkErrors: (error, request, reply) => { handleError(error, request, reply) },
    // replaced by drainOnClose, which answers in the Error shape
    return503OnClosing: false
  }).withTypeProvider<TypeBoxTypeProvider>()
}

/** The app as built: Fastify with the TypeBox type provider. */
export type Server = ReturnType<typeof createServer>

function trustHops (hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops
}
