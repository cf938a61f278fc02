import fp from 'fastify-plugin'
import { BackgroundWorkers } from './background-work.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where a capability starts its background work (background-loop.ts), so that the app's close stops it. */
    background: BackgroundWorkers
  }
}

/**
 * The app's background work, stopped all at once by one `onClose` hook. Registered right after the
 * database: Fastify runs `onClose` hooks last registered first, after the HTTP server has drained, so
 * every loop stops (its work in flight awaited) before the database closes (shutdown-budget.ts).
 */
export const backgroundWork = fp(async (app) => {
  const background = new BackgroundWorkers()
  app.decorate('background', background)
  app.addHook('onClose', async () => { await background.stopAll() })
}, { name: 'petstore-background', dependencies: ['petstore-database'] })
