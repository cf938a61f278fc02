import type { Registry } from 'prom-client'

/** One sample as prom-client's registries read them from a metric's `get()`. */
interface Sample {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

/** What prom-client's registries (and the cluster's AggregatorRegistry) read from a metric. */
interface Exported {
  name: string
  help: string
  type: 'counter' | 'histogram'
  values: Sample[]
  aggregator: 'sum'
}

interface TallyOptions<L extends string> {
  name: string
  help: string
  labelNames: readonly L[]
  registers: readonly Registry[]
}

/**
 * A metric counted in plain numbers on the request path and turned into Prometheus samples only when
 * scraped. prom-client's own Counter and Histogram hash a label object on every call (a histogram
 * observation cost more than a microsecond, a store call two: docs/performance.md); here a series is
 * found by its label values joined into one string, and a histogram bucket by a short scan.
 * Registered in prom-client registries like their own metrics, with the same exposition.
 */
abstract class Tally<L extends string, S> {
  readonly name: string
  readonly help: string
  readonly aggregator = 'sum' as const
  readonly #labelNames: readonly L[]
  // label values joined by SEPARATOR → the series' labels and numbers
  readonly #series = new Map<string, { labels: Record<L, string>, data: S }>()

  constructor (options: TallyOptions<L>) {
    this.name = options.name
    this.help = options.help
    this.#labelNames = options.labelNames
    for (const registry of options.registers) registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0])
  }

  protected abstract newData (): S

  /** The series of `labels`, made on first use: keep it to count into it without finding it again. */
  series (labels: Readonly<Record<L, string>>): S {
    let key = ''
    for (const name of this.#labelNames) key += `${labels[name]}${SEPARATOR}`
    let series = this.#series.get(key)
    if (series === undefined) {
      series = { labels: { ...labels }, data: this.newData() }
      this.#series.set(key, series)
    }
    return series.data
  }

  protected get allSeries (): Iterable<{ labels: Record<L, string>, data: S }> {
    return this.#series.values()
  }

  /** Sets every series back to zero (prom-client's `Registry.resetMetrics` calls it); kept series stay valid. */
  reset (): void {
    for (const { data } of this.#series.values()) this.zero(data)
  }

  protected abstract zero (data: S): void

  abstract get (): Promise<Exported>
}

// never inside a label value of ours (operation ids, statuses, key names are printable)
const SEPARATOR = '\u0000'

/** One series of a {@link TallyCounter}. */
export class CounterSeries {
  value = 0

  inc (value = 1): void {
    this.value += value
  }
}

/** A counter: {@link Tally}. */
export class TallyCounter<L extends string> extends Tally<L, CounterSeries> {
  readonly type = 'counter' as const

  protected newData (): CounterSeries {
    return new CounterSeries()
  }

  protected zero (data: CounterSeries): void {
    data.value = 0
  }

  inc (labels: Readonly<Record<L, string>>, value = 1): void {
    this.series(labels).inc(value)
  }

  async get (): Promise<Exported> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.allSeries].map(({ labels, data }) => ({ labels, value: data.value })) }
  }
}

/** One series of a {@link TallyHistogram}. */
export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly counts: Float64Array
  sum = 0
  readonly #bounds: readonly number[]

  constructor (bounds: readonly number[]) {
    this.#bounds = bounds
    this.counts = new Float64Array(bounds.length + 1)
  }

  observe (value: number): void {
    let bucket = 0
    while (bucket < this.#bounds.length && value > (this.#bounds[bucket] as number)) bucket++
    ;(this.counts[bucket] as number)++
    this.sum += value
  }
}

/** A histogram with fixed upper bounds, in the unit observed: {@link Tally}. */
export class TallyHistogram<L extends string> extends Tally<L, HistogramSeries> {
  readonly type = 'histogram' as const
  readonly #buckets: readonly number[]

  constructor (options: TallyOptions<L> & { buckets: readonly number[] }) {
    super(options)
    this.#buckets = [...options.buckets].sort((a, b) => a - b)
  }

  protected newData (): HistogramSeries {
    return new HistogramSeries(this.#buckets)
  }

  protected zero (data: HistogramSeries): void {
    data.counts.fill(0)
    data.sum = 0
  }

  observe (labels: Readonly<Record<L, string>>, value: number): void {
    this.series(labels).observe(value)
  }

  async get (): Promise<Exported> {
    const values: Sample[] = []
    for (const { labels, data } of this.allSeries) {
      let cumulative = 0
      this.#buckets.forEach((bound, index) => {
        cumulative += data.counts[index] as number
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${this.name}_bucket` })
      })
      const count = cumulative + (data.counts[this.#buckets.length] as number)
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` })
      values.push({ labels, value: data.sum, metricName: `${this.name}_sum` })
      values.push({ labels, value: count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}
