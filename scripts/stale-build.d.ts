/** Files outside src/ that change what `npm run build` writes. */
export const BUILD_INPUTS: readonly string[]

/** The files below `root` whose build in `dist/` is missing or older than they are, relative to `root`. */
export function staleBuildFiles (root: string): string[]

/** Files outside the client's src/ that change what its build writes. */
export const CLIENT_BUILD_INPUTS: readonly string[]

/** The files below `root` whose build in the client's dist/ is missing or older than they are, relative to `root`. */
export function staleClientBuildFiles (root: string): string[]
