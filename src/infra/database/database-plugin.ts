import fp from 'fastify-plugin'
import { instrumentStore } from '../metrics/instrument-store.js'
import type { Tracing } from '../tracing/tracing.js'
import type { Database } from './database.js'
import { openDatabase } from './open-database.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The one open database: each capability builds its own store on it. */
    database: Database
    /**
     * A capability's store as its routes should call it: each query timed (and traced when tracing is on).
     * Done once, at start-up.
     */
    instrumentStore: <S extends object>(store: S, options?: { traced?: boolean }) => S
  }
}

export interface DatabasePluginOptions {
  tracing: Tracing | undefined
}

/** Opens (and migrates) the database `DATABASE_URL` names; it is closed last, once every capability has stopped. */
export const databasePlugin = fp<DatabasePluginOptions>(async (app, { tracing }) => {
  const { database } = await openDatabase(app.config.database, {
    onBackgroundError: (error) => { app.log.warn({ err: error }, 'store connection failed while idle') }
  })
  app.decorate<Database>('database', database)
  app.addHook('onClose', async () => { await database.close() })
  // the database itself: a scrape's check is not a request's store call
  app.metrics.watchReadiness(async () => { await database.ping() })
  app.decorate('instrumentStore', <S extends object>(store: S, { traced = true }: { traced?: boolean } = {}): S =>
    instrumentStore(tracing === undefined || !traced ? store : tracing.traceStore(store), app.metrics.storeDuration))
}, { name: 'petstore-database', dependencies: ['petstore-http-foundation'] })
