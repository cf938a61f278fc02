import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import ts from 'typescript'
import { buildTestApp, tempDir } from '../helpers/build-app.js'

// what a user writes against types generated as the tool's README says: a create without `status`
// (the service fills it in) and a read that uses `status` without checking it is there
const CLIENT_CODE = `
import type { components, paths } from './openapi.js'

type NewPet = components['schemas']['NewPet']
type Pet = components['schemas']['Pet']
type CreateBody = paths['/pets']['post']['requestBody']['content']['application/json']

export const rex: NewPet = { name: 'Rex', categoryId: 1 }
export const body: CreateBody = { name: 'Rex', categoryId: 1 }
export const sold: NewPet = { name: 'Tom', categoryId: 2, status: 'sold' }

declare const created: paths['/pets']['post']['responses'][201]['content']['application/json']
declare const read: paths['/pets/{petId}']['get']['responses'][200]['content']['application/json']
declare const page: paths['/pets']['get']['responses'][200]['content']['application/json']
export const statuses: Array<'available' | 'pending' | 'sold'> = [created.status, read.status, ...page.map((pet: Pet) => pet.status)]
export const label: string = read.status.toUpperCase()
`

/** Types openapi-typescript generates from `document` with its default options. */
async function generateWithDefaults (document: OpenAPI3): Promise<string> {
  return astToString(await openapiTS(structuredClone(document)))
}

/** The compiler's complaints about {@link CLIENT_CODE} against `types`, under strict options. */
async function typeCheck (t: TestContext, types: string): Promise<string[]> {
  const dir = await tempDir(t)
  await writeFile(join(dir, 'openapi.ts'), types)
  await writeFile(join(dir, 'client.ts'), CLIENT_CODE)
  const program = ts.createProgram([join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    skipLibCheck: true
  })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
}

describe('Clients generated with their tools\' defaults', () => {
  test('When openapi-typescript generates types from the served document with its default options, then a create may omit status and a read may rely on it', async (t) => {
    const { app } = await buildTestApp(t, { withKey: false })
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<OpenAPI3>()

    const problems = await typeCheck(t, await generateWithDefaults(document))

    assert.deepEqual(problems, [])
  })

  test('When NewPet.status carries a JSON Schema default, then openapi-typescript\'s defaults make it required (what the document avoids)', async (t) => {
    const { app } = await buildTestApp(t, { withKey: false })
    const document = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<OpenAPI3>()
    const newPet = document.components?.schemas?.NewPet as { properties: Record<string, Record<string, unknown>> }
    newPet.properties.status = { ...newPet.properties.status, default: 'available' }

    const problems = await typeCheck(t, await generateWithDefaults(document))

    assert.ok(problems.some((problem) => problem.includes("Property 'status' is missing")), problems.join('\n'))
  })
})
