import type { MeasureContext } from './measure.js'

/** What every part of a run shares. */
export interface BenchContext extends MeasureContext {
  /** The bearer key every server accepts. */
  apiKey: string
  /** The PostgreSQL server to make schemas on. */
  pgServerUrl: string
}
