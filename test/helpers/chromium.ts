import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import type { TestContext } from 'node:test'
import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium (playwright-core downloads no browser of its own); `CHROMIUM_PATH` names another build. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// headless, and nothing of its own on the network: no updates, no sync, no QUIC probes. Playwright gives
// every launch a fresh profile of its own (a new --user-data-dir), removed when the browser closes
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync']
const INSTALL_HINT = 'install it with `apt-get install chromium`'
const BROWSER_REQUIRED = process.env.REQUIRE_BROWSER === '1'
const CHROMIUM_MISSING = !existsSync(CHROMIUM_PATH)

/** A test's `skip` option: skipped, saying how to run it, when there is no Chromium and `REQUIRE_BROWSER` is not 1 (CI sets it). */
export const SKIP_WITHOUT_CHROMIUM: string | false = CHROMIUM_MISSING && !BROWSER_REQUIRED ? `no browser at ${CHROMIUM_PATH}: ${INSTALL_HINT} to run it` : false

/** Launches Chromium, closed when the test ends; fails naming the fix when it is missing although required. */
export async function launchChromium (t: TestContext): Promise<Browser> {
  assert.ok(!CHROMIUM_MISSING, `REQUIRE_BROWSER=1 but there is no browser at ${CHROMIUM_PATH}: ${INSTALL_HINT}`)
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
  t.after(() => browser.close())
  return browser
}
