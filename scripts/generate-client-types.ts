// Writes the TypeScript client's generated types: npm run generate:client
import { readFile, writeFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { GENERATED_TYPES_PATH, renderClientTypes } from './client-types.js'

const types = await renderClientTypes()
const name = relative(process.cwd(), GENERATED_TYPES_PATH)
// an unchanged file is left alone, so that nothing looks newer than the client's build
if (await readFile(GENERATED_TYPES_PATH, 'utf8').catch(() => '') === types) {
  process.stdout.write(`${name} is up to date\n`)
} else {
  await writeFile(GENERATED_TYPES_PATH, types)
  process.stdout.write(`wrote ${name}\n`)
}
