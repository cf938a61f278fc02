import assert from 'node:assert/strict'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { GET_PET_SUNSET_AT } from '../../src/capabilities/pets/get-pet-deprecation.js'
import { buildTestApp, postPet } from '../helpers/build-app.js'
import { launchChromium, SKIP_WITHOUT_CHROMIUM } from '../helpers/chromium.js'
import { freePort, PROJECT_ROOT } from '../helpers/processes.js'

const SCREENSHOTS = join(PROJECT_ROOT, 'test-results')

const PET_NAME = 'Docs-Page-Rex'

/** A page of the reference, with what it asked for and complained about while the test used it. */
interface DocsPage {
  page: Page
  requestedUrls: string[]
  consoleErrors: string[]
}

async function openDocs (browser: Browser, baseUrl: string): Promise<DocsPage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  // auto-waiting locators give up after this, instead of Playwright's 30 s
  page.setDefaultTimeout(10_000)
  const opened: DocsPage = { page, requestedUrls: [], consoleErrors: [] }
  page.on('request', (request) => { opened.requestedUrls.push(request.url()) })
  // CSP refusals and script errors both land here
  page.on('console', (message) => { if (message.type() === 'error') opened.consoleErrors.push(message.text()) })
  page.on('pageerror', (error) => { opened.consoleErrors.push(error.message) })
  await page.goto(`${baseUrl}/docs`)
  return opened
}

/** Nothing but the service was asked for (the page must work offline), and nothing was refused or failed. */
function assertSelfContained (docs: DocsPage, baseUrl: string): void {
  const origin = new URL(baseUrl).origin
  // data: URLs (icons inside the CSS) are no request to anyone
  const foreign = docs.requestedUrls.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)
  assert.deepEqual(foreign, [], 'the page asked another origin')
  assert.deepEqual(docs.consoleErrors, [], 'the page logged errors')
}

/** The block of one operation, expanded. */
async function expandOperation (page: Page, tag: string, operationId: string): Promise<Locator> {
  const block = page.locator(`#operations-${tag}-${operationId}`)
  await block.locator('.opblock-summary-control').click()
  await block.locator('.opblock-body').waitFor()
  return block
}

test('API reference page (/docs) in Chromium', { skip: SKIP_WITHOUT_CHROMIUM }, async (t) => {
  // the default configuration (no PUBLIC_BASE_URL): the document's server is http://127.0.0.1:<PORT>/v1
  const port = await freePort()
  const api = await buildTestApp(t, { env: { PORT: String(port) } })
  await api.app.listen({ port, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${port}`
  const created = await postPet(api, { name: PET_NAME, categoryId: 7 })
  assert.equal(created.statusCode, 201, created.body)

  const browser = await launchChromium(t)

  await t.test('When a reader authorizes with a key and runs listPets from the page, then the answer shows the pets', async () => {
    const docs = await openDocs(browser, baseUrl)
    const { page } = docs

    await page.locator('.scheme-container').getByRole('button', { name: 'Authorize' }).click()
    const dialog = page.locator('.modal-ux')
    await dialog.getByLabel('auth-bearer-value').fill(api.key)
    await dialog.getByRole('button', { name: 'Apply credentials' }).click()
    await dialog.getByRole('button', { name: 'Close' }).click()

    const listPets = await expandOperation(page, 'pets', 'listPets')
    await listPets.getByRole('button', { name: 'Try it out' }).click()
    await listPets.getByRole('button', { name: 'Execute' }).click()

    const answer = listPets.locator('.live-responses-table')
    await answer.locator('.response-col_status').filter({ hasText: '200' }).waitFor()
    await answer.getByText(PET_NAME).waitFor()
    assert.ok(docs.requestedUrls.some((url) => url.startsWith(`${baseUrl}/v1/pets?`) || url === `${baseUrl}/v1/pets`), 'no request reached /v1/pets')
    await mkdir(SCREENSHOTS, { recursive: true })
    await answer.screenshot({ path: join(SCREENSHOTS, 'docs-page-list-pets.png') })
    assertSelfContained(docs, baseUrl)
    await page.close()
  })

  await t.test('When the page shows the operations, then their markers and panels follow the document\'s extensions (getPet deprecated, updatePet and the orders beta)', async () => {
    const docs = await openDocs(browser, baseUrl)
    const { page } = docs

    const getPet = page.locator('#operations-pets-getPet')
    await getPet.locator('.opblock-summary').getByText(`deprecated, sunset ${GET_PET_SUNSET_AT.toISOString().slice(0, 10)}`).waitFor()
    assert.match(await getPet.getAttribute('class') ?? '', /\bopblock-deprecated\b/, 'Swagger UI did not mark getPet deprecated')
    const orders = page.locator('#operations-store-listOrders')
    await orders.locator('.opblock-summary').getByText('beta', { exact: true }).waitFor()
    // beta, and not deprecated although GET on the same path is
    const updatePet = page.locator('#operations-pets-updatePet')
    await updatePet.locator('.opblock-summary').getByText('beta', { exact: true }).waitFor()
    assert.equal(await updatePet.locator('[data-marker="deprecated"]').count(), 0)
    assert.doesNotMatch(await updatePet.getAttribute('class') ?? '', /\bopblock-deprecated\b/, 'Swagger UI marked updatePet deprecated')
    await mkdir(SCREENSHOTS, { recursive: true })
    await page.locator('#operations-tag-pets').scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(SCREENSHOTS, 'docs-page.png') })

    const placeOrder = await expandOperation(page, 'store', 'placeOrder')
    await placeOrder.getByRole('button', { name: 'Try it out' }).waitFor()

    // an operation without the extensions keeps its panel and shows no marker
    const createPet = await expandOperation(page, 'pets', 'createPet')
    await createPet.getByRole('button', { name: 'Try it out' }).waitFor()
    assert.equal(await createPet.locator('[data-marker]').count(), 0)
    assertSelfContained(docs, baseUrl)
    await page.close()
  })
})
