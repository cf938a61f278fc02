import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { INSTALL_ROOT } from '../../infra/runtime/install-root.js'

// what delivery promises, for the modules that deliver and for those that describe it or start it

/** Most of a receiver's answer read: its body is not used, only drained so the connection can be reused. */
export const RESPONSE_BODY_LIMIT_BYTES = 64 * 1024

const VERSION = (JSON.parse(readFileSync(join(INSTALL_ROOT, 'package.json'), 'utf8')) as { version: string }).version
/** The `User-Agent` of every webhook request. */
export const WEBHOOK_USER_AGENT = `petstore-webhooks/${VERSION}`
