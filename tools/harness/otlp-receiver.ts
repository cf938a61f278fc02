import { createServer, type Server } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

/** One span as an OTLP/HTTP JSON export carries it, with its attributes flattened. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  attributes: Record<string, string | number | boolean>
  /** The `service.name` of the resource that sent it. */
  serviceName: string | undefined
}

interface AnyValue { stringValue?: string, intValue?: string | number, boolValue?: boolean, doubleValue?: number }
interface KeyValue { key: string, value: AnyValue }
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: Array<{ spans?: Array<{ traceId: string, spanId: string, parentSpanId?: string, name: string, attributes?: KeyValue[] }> }>
  }>
}

function flatten (attributes: KeyValue[] = []): Record<string, string | number | boolean> {
  return Object.fromEntries(attributes.map(({ key, value }) =>
    [key, value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue ?? '']))
}

/**
 * A local OTLP/HTTP receiver for JSON exports (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`): it accepts
 * `POST /v1/traces` on 127.0.0.1 and keeps every span, and every request body as received
 * (or, with `keep: false`, only counts the exports, as a benchmark's collector).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  /** The raw bodies, to check what was (not) exported. */
  readonly bodies: string[] = []
  /** Exports received. */
  exports = 0
  readonly #server: Server
  readonly #keep: boolean

  private constructor (server: Server, keep: boolean) {
    this.#server = server
    this.#keep = keep
  }

  static async start (options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
    const server = createServer()
    const receiver = new OtlpReceiver(server, options.keep ?? true)
    server.on('request', (request, response) => {
      let body = ''
      request.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
        if (request.method !== 'POST' || request.url !== '/v1/traces') {
          response.writeHead(404).end()
          return
        }
        receiver.#receive(body)
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => { server.listen(0, '127.0.0.1', resolve) })
    return receiver
  }

  /** The base URL to give as `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  get endpoint (): string {
    const address = this.#server.address()
    if (address === null || typeof address === 'string') throw new Error('the OTLP receiver is not listening')
    return `http://127.0.0.1:${address.port}`
  }

  /** Waits (at most `ms`) until the spans received satisfy `done`, polling. */
  async waitFor (done: (spans: readonly ReceivedSpan[]) => boolean, ms = 10_000): Promise<readonly ReceivedSpan[]> {
    const deadline = Date.now() + ms
    while (!done(this.spans)) {
      if (Date.now() > deadline) throw new Error(`the spans never arrived as expected; received:\n${JSON.stringify(this.spans, null, 1)}`)
      await sleep(50)
    }
    return this.spans
  }

  async close (): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => { this.#server.close(() => { resolve() }) })
  }

  #receive (body: string): void {
    this.exports++
    if (!this.#keep) return
    this.bodies.push(body)
    const request = JSON.parse(body) as ExportRequest
    for (const resourceSpans of request.resourceSpans ?? []) {
      const serviceName = flatten(resourceSpans.resource?.attributes)['service.name']
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            attributes: flatten(span.attributes),
            serviceName: typeof serviceName === 'string' ? serviceName : undefined
          })
        }
      }
    }
  }
}
