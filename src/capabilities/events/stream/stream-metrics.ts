import { Counter, Gauge, type Registry } from 'prom-client'
import { STREAM_ENDS } from './event-stream.js'

/** The streams' metrics, declared by the capability that serves them and registered in the app's registry; each series from the start. */
export class StreamMetrics {
  readonly open: Gauge
  readonly messages: Counter
  readonly ended: Counter<'reason'>
  readonly behind: Counter
  readonly refused: Counter<'cap'>

  constructor (registry: Registry) {
    const registers = [registry]
    const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> => new Counter({ name, help, labelNames, registers })
    this.open = new Gauge({
      name: 'petstore_event_streams_open',
      help: 'Streams of the change feed (GET /v1/events as text/event-stream) open on this instance now.',
      registers
    })
    this.messages = counter('petstore_event_stream_messages_total',
      'Event messages written to the change feed\'s streams (one per event and stream; heartbeats not counted).')
    this.ended = counter('petstore_event_streams_ended_total',
      'Streams of the change feed ended by the service, by reason (backlog: the consumer stopped reading and its unsent backlog passed EVENT_STREAM_MAX_BACKLOG_KIB, so it was cut; shutdown: the instance closed; failed: the store failed while it caught up; expired: retention deleted events after its position while it caught up, and its last message was the 410 events_expired as an error message). A consumer that hangs up is not counted.',
      ['reason'])
    this.behind = counter('petstore_event_streams_behind_total',
      'Times a stream of the change feed fell behind: its unsent backlog passed EVENT_STREAM_MAX_BACKLOG_KIB, so it left the live streams to catch up with its own reads at its consumer\'s pace (a consumer reading slower than the feed is written; one that then takes nothing for a heartbeat is cut).')
    this.refused = counter('petstore_event_streams_refused_total',
      'Streams of the change feed refused at their start, by cap (per_key: EVENT_STREAM_MAX_PER_KEY, 429; per_instance: EVENT_STREAM_MAX_PER_INSTANCE, 503).',
      ['cap'])
    this.open.set(0)
    for (const cap of ['per_key', 'per_instance'] as const) this.refused.inc({ cap }, 0)
    for (const reason of STREAM_ENDS) this.ended.inc({ reason }, 0)
  }
}
