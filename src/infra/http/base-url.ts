import type { Config } from '../config/config.js'

/**
 * The base address (ending in `/v1`) of the deployment a request came through:
 * staging when the request's host is the staging host, production otherwise.
 * Absolute links in answers point back to the same deployment.
 */
export function baseUrlFor (config: Config, requestHost: string | undefined): string {
  if (config.stagingBaseUrl === undefined || requestHost === undefined) return config.publicBaseUrl
  const staging = new URL(config.stagingBaseUrl)
  return sameHost(staging, requestHost) ? config.stagingBaseUrl : config.publicBaseUrl
}

function sameHost (base: URL, requestHost: string): boolean {
  let request: URL
  try {
    // parsed with the base's scheme, so an explicit default port (":443") compares equal to none
    request = new URL(`${base.protocol}//${requestHost}`)
  } catch {
    return false
  }
  return request.host === base.host
}

/** The servers for routes that live beside `/v1` rather than under it (health checks, …). */
export function unversionedServers (config: Config): Array<{ url: string, description: string }> {
  const withoutVersion = (url: string): string => url.slice(0, -'/v1'.length) || '/'
  const servers = [{ url: withoutVersion(config.publicBaseUrl), description: 'Production' }]
  if (config.stagingBaseUrl !== undefined) servers.push({ url: withoutVersion(config.stagingBaseUrl), description: 'Staging' })
  return servers
}
