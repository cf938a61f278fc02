import { createRequire } from 'node:module'
import { context, propagation, SpanStatusCode, trace, type Attributes, type Tracer } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-node'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { DatabaseLocation, TraceSampler, TracingSettings } from '../config/config.js'
import { wrapStoreCalls } from '../runtime/wrap-store.js'
import { RequestSampler, requestSpans, traceIdOf } from './request-spans.js'

export { SPAN_ATTRIBUTES } from './request-spans.js'

// Loaded only when tracing is configured (app.ts imports this module dynamically): without
// OTEL_EXPORTER_OTLP_ENDPOINT none of OpenTelemetry's SDK is loaded and no request pays for it.

/** `service.name` unless `OTEL_SERVICE_NAME` (or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) says otherwise. */
export const DEFAULT_SERVICE_NAME = 'petstore'

/** The longest shutdown waits for the last spans to be exported. */
export const SHUTDOWN_EXPORT_MS = 2_000

/** What the app wires in when tracing is on. */
export interface Tracing {
  /** Registers one span per request (continuing a caller's `traceparent`) and names its operation and key; register before any route. */
  plugin: (app: FastifyInstance) => Promise<void>
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
 * one span per request (request-spans.ts, which decides first whether a request is recorded) and, on
 * PostgreSQL, the pg instrumentation.
 */
export function startTracing (settings: TracingSettings, database: DatabaseLocation): Tracing {
  const sampler = samplerOf(settings.sampler)
  const provider = new NodeTracerProvider({
    sampler: new RequestSampler(sampler),
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
  return {
    plugin: requestSpans(tracer, settings.sampler, sampler),
    traceStore: (store) => traceStore(store, tracer, database.kind === 'postgres' ? 'postgresql' : 'sqlite'),
    traceIdOf,
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
  return wrapStoreCalls(store, (call, name) => {
    const options = { attributes: { 'db.system.name': system, 'db.operation.name': name } satisfies Attributes }
    const spanName = `store.${name}`
    return (...args: unknown[]) => {
      // outside a recorded request (one not sampled, or none): the call as it is, no span and no context
      if (trace.getSpan(context.active())?.isRecording() !== true) return call(...args)
      return tracer.startActiveSpan(spanName, options, async (span) => {
        try {
          return await call(...args)
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
          throw error
        } finally {
          span.end()
        }
      })
    }
  })
}
