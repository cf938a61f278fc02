// Writes the TypeScript client's generated types: npm run generate:client
import { writeFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { GENERATED_TYPES_PATH, renderClientTypes } from './client-types.js'

await writeFile(GENERATED_TYPES_PATH, await renderClientTypes())
process.stdout.write(`wrote ${relative(process.cwd(), GENERATED_TYPES_PATH)}\n`)
