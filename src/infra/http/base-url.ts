import type { Config } from '../config/config.js'

// the staging base parsed once per configuration, and the verdicts for the request hosts seen
const stagingOf = new WeakMap<Config, { base: URL, verdicts: Map<string, boolean> }>()
// a Host header is the client's to choose: verdicts are kept for this many hosts, the others decided each time
const MAX_KEPT_HOSTS = 64

/**
 * The base address (ending in `/v1`) of the deployment a request came through:
 * staging when the request's host is the staging host, production otherwise.
 * Absolute links in answers point back to the same deployment. It runs on every getPet and list:
 * the staging address is parsed once, and the verdict kept for the hosts seen first.
 */
export function baseUrlFor (config: Config, requestHost: string | undefined): string {
  if (config.stagingBaseUrl === undefined || requestHost === undefined) return config.publicBaseUrl
  let staging = stagingOf.get(config)
  if (staging === undefined) {
    staging = { base: new URL(config.stagingBaseUrl), verdicts: new Map() }
    stagingOf.set(config, staging)
  }
  let same = staging.verdicts.get(requestHost)
  if (same === undefined) {
    same = sameHost(staging.base, requestHost)
    if (staging.verdicts.size < MAX_KEPT_HOSTS) staging.verdicts.set(requestHost, same)
  }
  return same ? config.stagingBaseUrl : config.publicBaseUrl
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
