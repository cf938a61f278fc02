import { context, createContextKey, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api'
import { SamplingDecision, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-node'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { TraceSampler } from '../config/config.js'

/** Span attributes the service adds to a request's span (beside http.route, the method and the status). */
export const SPAN_ATTRIBUTES = {
  operationId: 'petstore.operation_id',
  keyName: 'petstore.api_key.name',
  keyRole: 'petstore.api_key.role'
} as const

// set on the parent context of a request span this plugin decided to record (see RequestSampler)
const RECORDED_REQUEST = createContextKey('petstore.recorded-request')
const kSpan = Symbol('petstore.request-span')
const kTraceId = Symbol('petstore.trace-id')
const kErrorRecorded = Symbol('petstore.error-recorded')

interface TracedRequest {
  [kSpan]?: Span
  [kTraceId]?: string
  [kErrorRecorded]?: boolean
}

/**
 * The provider's sampler: a request span this plugin decided to record is recorded; every other span
 * (a store call's, a webhook delivery's) is decided by `sampler`, the one configured, as it would be
 * without this plugin. The decision of a new request trace is taken once, before any span exists.
 */
export class RequestSampler implements Sampler {
  constructor (private readonly sampler: Sampler) {}

  shouldSample (parent: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (parent.getValue(RECORDED_REQUEST) === true) return { decision: SamplingDecision.RECORD_AND_SAMPLED }
    return this.sampler.shouldSample(parent, traceId, name, kind, attributes, links)
  }

  toString (): string {
    return `RequestSampler{${this.sampler.toString()}}`
  }
}

/**
 * One span per request, named `<METHOD> <route>`, continuing a caller's W3C `traceparent`, with the
 * attributes @fastify/otel gave its request spans (which this replaces: it starts a span and a context for
 * every request, sampled or not, and one more for the handler) and ours. Whether a request is recorded is decided
 * first, from its `traceparent` and `setting` (what `sampler`, the provider's, would decide): a request
 * that is not recorded gets no span, no context and no further work, so that sampling a share of the
 * traffic costs about that share of tracing everything (docs/performance.md).
 */
export function requestSpans (tracer: Tracer, setting: TraceSampler, sampler: Sampler): (app: FastifyInstance) => Promise<void> {
  return fp(async (app: FastifyInstance) => {
    app.decorateRequest(kSpan, undefined)
    app.decorateRequest(kTraceId, undefined)
    app.decorateRequest(kErrorRecorded, false)

    // first of all hooks (the plugin is registered first), so the span encloses them all
    app.addHook('onRequest', (request, _reply, done) => {
      const traced = request as FastifyRequest & TracedRequest
      const parent = request.headers.traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, request.headers)
      const caller = trace.getSpanContext(parent)
      const callerTraceId = caller !== undefined && trace.isSpanContextValid(caller) ? caller.traceId : undefined
      traced[kTraceId] = callerTraceId
      const recorded = callerTraceId === undefined
        // a new trace: its id is random, so keeping it by its id (traceidratio) is keeping it with this probability
        ? setting.ratio >= 1 || (setting.ratio > 0 && Math.random() < setting.ratio)
        // a caller's trace: its sampled flag (parent-based), or the ratio applied to its trace id, as the SDK
        // decides (its samplers do not read the span's name)
        : sampler.shouldSample(parent, callerTraceId, request.method, SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED
      if (!recorded) {
        done()
        return
      }
      // read once, and only now: Fastify builds routeOptions anew on each read
      const route = request.routeOptions.url
      const attributes: Attributes = { 'http.request.method': request.method, 'url.path': request.url }
      if (route !== undefined) attributes['http.route'] = route
      const span = tracer.startSpan(`${request.method} ${route ?? 'unmatched'}`, { kind: SpanKind.SERVER, attributes }, parent.setValue(RECORDED_REQUEST, true))
      traced[kSpan] = span
      traced[kTraceId] = span.spanContext().traceId
      // the rest of the request runs in the span's context: store calls (and pg's queries) become its children
      // (recorded, as the SDK would record all of a trace it keeps, whatever the sampler decides of a new id)
      context.with(trace.setSpan(parent.setValue(RECORDED_REQUEST, true), span), done)
    })

    app.addHook('onError', (request, _reply, error, done) => {
      const traced = request as FastifyRequest & TracedRequest
      const span = traced[kSpan]
      if (span !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.message })
        span.recordException(error)
        traced[kErrorRecorded] = true
      }
      done()
    })

    // when the answer has gone out (or the client went away): the whole request, the write included
    app.addHook('onResponse', (request, reply, done) => {
      endSpan(request, reply)
      done()
    })
    app.addHook('onRequestAbort', (request, done) => {
      endSpan(request, undefined)
      done()
    })
  }, { name: 'petstore-request-spans' })
}

function endSpan (request: FastifyRequest, reply: FastifyReply | undefined): void {
  const traced = request as FastifyRequest & TracedRequest
  const span = traced[kSpan]
  // once: a request whose client went away may still answer
  if (span === undefined || !span.isRecording()) return
  const attributes: Attributes = {}
  const operationId = request.routeOptions.schema?.operationId
  if (operationId !== undefined) attributes[SPAN_ATTRIBUTES.operationId] = operationId
  // the key's name and role, never the key
  const key = request.apiKey ?? null
  if (key !== null) {
    attributes[SPAN_ATTRIBUTES.keyName] = key.name
    attributes[SPAN_ATTRIBUTES.keyRole] = key.role
  }
  if (reply !== undefined) {
    if (reply.statusCode >= 500 && traced[kErrorRecorded] !== true) span.setStatus({ code: SpanStatusCode.ERROR })
    attributes['http.response.status_code'] = reply.statusCode
  }
  span.setAttributes(attributes)
  span.end()
}

/** The trace id of a request for its access-log line: its span's, or when it was not recorded, its caller's (if any). */
export function traceIdOf (request: FastifyRequest): string | undefined {
  return (request as FastifyRequest & TracedRequest)[kTraceId]
}
