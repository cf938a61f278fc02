import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { createBootstrapKeyIfNone } from './auth/bootstrap-key.js'
import { ConfigError, loadConfig, type Config } from './config.js'

/** How long in-flight requests get to finish after SIGTERM before the process exits anyway. */
const DRAIN_TIMEOUT_MS = 10_000

async function start (config: Config): Promise<void> {
  const app = await buildApp({ config })

  closeWithGrace({ delay: DRAIN_TIMEOUT_MS, logger: app.log }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an unexpected error')
    else app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    await app.close()
  })

  await app.listen({ port: config.port, host: config.host })
  app.log.info({ store: app.store.description }, 'petstore ready')

  const key = await createBootstrapKeyIfNone(app.store, config.apiKeys)
  if (key !== undefined) printBootstrapKey(key, config)
}

function printBootstrapKey (key: string, config: Config): void {
  process.stdout.write([
    '',
    'No API key existed, so petstore created one. It is shown only this once; keep it:',
    '',
    `  ${key}`,
    '',
    'Try it:',
    `  curl -H 'Authorization: Bearer ${key}' ${config.publicBaseUrl}/pets`,
    '',
    'Manage keys with: npx petstore keys create --name <name> | keys list | keys revoke <id>',
    '',
    ''
  ].join('\n'))
}

let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  process.stderr.write(`petstore: configuration error: ${error.message}\n`)
  process.exit(1)
}

start(config).catch((error: unknown) => {
  process.stderr.write(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
