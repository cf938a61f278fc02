import { fileURLToPath } from 'node:url'

/** The repository root: the working directory of every process the tools start (`src/`, `dist/`, `bench/` are below it). */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url))
