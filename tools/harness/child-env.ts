import { CONFIG_VARIABLES } from '../../src/infra/config/config.js'

/**
 * This process's environment without any of the service's settings ({@link CONFIG_VARIABLES}),
 * plus `overrides`: a developer's shell must not change what a spawned server does.
 */
export function childEnv (overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of CONFIG_VARIABLES) delete env[name]
  return { ...env, ...overrides }
}
