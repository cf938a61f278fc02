import { isIP } from 'node:net'
import { ConfigError } from './config-error.js'

/**
 * A comma-separated list of networks in CIDR notation (`10.20.0.0/16, fd00:1::/64`), each checked:
 * an IPv4 or IPv6 address, a prefix of 0 to 32 or 128. Empty when unset.
 */
export function parseNetworks (variable: string, value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return []
  return value.split(',').map((item) => item.trim()).filter((item) => item !== '').map((cidr) => {
    const [network = '', prefix, extra] = cidr.split('/')
    const family = isIP(network)
    if (family === 0 || extra !== undefined || prefix === undefined || !/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)) {
      throw new ConfigError(variable, `must be comma-separated networks in CIDR notation such as 10.20.0.0/16 or fd00:1::/64, got "${cidr}"`)
    }
    return cidr
  })
}
