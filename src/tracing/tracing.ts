import { createRequire } from 'node:module'
import { context, propagation, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-node'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { DatabaseLocation, TraceSampler, TracingSettings } from '../config.js'
import { wrapStoreCalls } from '../store/wrap-store.js'

// Loaded only when tracing is configured (app.ts imports this module dynamically): without
// OTEL_EXPORTER_OTLP_ENDPOINT none of OpenTelemetry's SDK is loaded and no request pays for it.

/** `service.name` unless `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) says otherwise. */
export const DEFAULT_SERVICE_NAME = 'petstore'

/** Span attributes the service adds to a request's span (beside http.route, the method and the status). */
export const SPAN_ATTRIBUTES = {
  operationId: 'petstore.operation_id',
  keyName: 'petstore.api_key.name',
  keyRole: 'petstore.api_key.role'
} as const

/** The longest shutdown waits for the last spans to be exported. */
export const SHUTDOWN_EXPORT_MS = 2_000

/** What the app wires in when tracing is on. */
export interface Tracing {
  /** Registers one span per request (continuing a caller's `traceparent`) and names its operation and key; register before any route. */
  plugin: FastifyPluginAsync
  /** A store (pets, events) with a child span around every call (SQLite has no OpenTelemetry instrumentation; on PostgreSQL pg's spans nest below). */
  traceStore: <S extends object>(store: S) => S
  /** The trace id of a request, for its access-log line. */
  traceIdOf: (request: FastifyRequest) => string | undefined
  /** Exports what is still buffered and stops. */
  shutdown: () => Promise<void>
}

/**
 * Starts OpenTelemetry: a tracer provider sampling as `settings.sampler` says and exporting OTLP/HTTP JSON
 * to `settings.tracesUrl` in batches (the SDK reads its other standard variables itself: `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`, …),
 * the official Fastify instrumentation and, on PostgreSQL, the pg instrumentation.
 */
export function startTracing (settings: TracingSettings, database: DatabaseLocation): Tracing {
  const provider = new NodeTracerProvider({
    sampler: samplerOf(settings.sampler),
    resource: resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }).merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))]
  })
  // W3C traceparent propagation and AsyncLocalStorage context, process-wide
  provider.register()
  const tracer = provider.getTracer('petstore')

  if (database.kind === 'postgres') {
    const pg = new PgInstrumentation({ requireParentSpan: true })
    pg.setTracerProvider(provider)
    // the hook patches pg when it is required: load it here, before the store imports it
    createRequire(import.meta.url)('pg')
  }
  const fastifyOtel = new FastifyOtelInstrumentation({
    // one span per request and one for its handler; hook spans would add a dozen per request
    instrumentHooks: false,
    requestHook: (span, request) => { span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`) }
  })
  fastifyOtel.setTracerProvider(provider)

  return {
    plugin: fp(async (app: FastifyInstance) => {
      await app.register(fastifyOtel.plugin())
      // before the request span ends (in the route's own onSend): the operation, and the key's name and role — never the key
      app.addHook('onSend', async (request, _reply, payload) => {
        const span = request.opentelemetry().span
        const operationId = request.routeOptions.schema?.operationId
        if (operationId !== undefined) span?.setAttribute(SPAN_ATTRIBUTES.operationId, operationId)
        const key = request.apiKey ?? null
        if (key !== null) span?.setAttributes({ [SPAN_ATTRIBUTES.keyName]: key.name, [SPAN_ATTRIBUTES.keyRole]: key.role })
        return payload
      })
    }, { name: 'petstore-tracing' }),
    traceStore: (store) => traceStore(store, tracer, database.kind === 'postgres' ? 'postgresql' : 'sqlite'),
    traceIdOf: (request) => {
      const requestContext = request.opentelemetry().context
      return requestContext === undefined || requestContext === null ? undefined : trace.getSpanContext(requestContext)?.traceId
    },
    shutdown: async () => {
      // an unreachable or slow collector must neither fail nor hold up the shutdown (its drain is bounded)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        provider.shutdown().catch(() => {}),
        new Promise<void>((resolve) => { timer = setTimeout(resolve, SHUTDOWN_EXPORT_MS) })
      ])
      clearTimeout(timer)
      // so that a later app in this process (tests) can register its own
      trace.disable()
      context.disable()
      propagation.disable()
    }
  }
}

/** The SDK's sampler for the setting config.ts parsed from `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`. */
function samplerOf (setting: TraceSampler): Sampler {
  const root = setting.ratio === 1 ? new AlwaysOnSampler() : setting.ratio === 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(setting.ratio)
  return setting.parentBased ? new ParentBasedSampler({ root }) : root
}

function traceStore<S extends object> (store: S, tracer: Tracer, system: string): S {
  return wrapStoreCalls(store, (call, name) => async (...args: unknown[]) =>
    tracer.startActiveSpan(`store.${name}`, { attributes: { 'db.system.name': system, 'db.operation.name': name } }, async (span) => {
      try {
        return await call(...args)
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
        throw error
      } finally {
        span.end()
      }
    }))
}
