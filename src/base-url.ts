import type { Config } from './config.js'

/**
 * The base address (ending in `/v1`) of the deployment a request came through:
 * staging when the request's host is the staging host, production otherwise.
 * Absolute links in answers point back to the same deployment.
 */
export function baseUrlFor (config: Config, requestHost: string | undefined): string {
  if (config.stagingBaseUrl !== undefined && requestHost !== undefined &&
      new URL(config.stagingBaseUrl).host === requestHost.toLowerCase()) {
    return config.stagingBaseUrl
  }
  return config.publicBaseUrl
}
