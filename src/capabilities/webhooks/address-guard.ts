import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/** Ranges a webhook must never reach unless private networks are allowed: the operator's own network and the cloud metadata services. */
const PRIVATE_RANGES: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network"
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, and the metadata service of most clouds (169.254.169.254)
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, and 255.255.255.255
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'], // NAT64: an IPv4 address inside
  ['fc00::', 7, 'ipv6'], // unique local (and AWS's fd00:ec2::254 metadata)
  ['fe80::', 10, 'ipv6'], // link-local
  ['ff00::', 8, 'ipv6'] // multicast
]

const blocked = new BlockList()
for (const [network, prefix, type] of PRIVATE_RANGES) blocked.addSubnet(network, prefix, type)

/** Whether an address is loopback, private, link-local, unique-local, metadata or otherwise not the public internet. */
export function isPrivateAddress (address: string): boolean {
  const family = isIP(address)
  if (family === 4) return blocked.check(address, 'ipv4')
  if (family !== 6) return true
  // an IPv4-mapped IPv6 address (::ffff:10.0.0.1) is that IPv4 address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  return mapped !== undefined ? blocked.check(mapped, 'ipv4') : blocked.check(address, 'ipv6')
}

/** A webhook URL that may not be called; the message says why, for `webhooks add` and for the delivery's log. */
export class WebhookAddressError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'WebhookAddressError'
  }
}

/** The host of a URL as DNS or an address literal knows it (`[::1]` → `::1`). */
export function hostOf (url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

/** Every address `host` resolves to (or the host itself, when it is an address). */
export async function resolveHost (host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host]
  return await new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (error, addresses: LookupAddress[]) => {
      if (error !== null) reject(new WebhookAddressError(`${host} does not resolve (${error.code ?? error.message})`))
      else resolve(addresses.map((entry) => entry.address))
    })
  })
}

/**
 * Throws unless every address `host` resolves to is public. Used at `webhooks add`; at delivery the
 * connection's own look-up is guarded ({@link guardedLookup}), so a name re-pointed since cannot slip through.
 */
export async function assertPublicHost (host: string): Promise<void> {
  const addresses = await resolveHost(host)
  const internal = addresses.find(isPrivateAddress)
  if (internal !== undefined) {
    throw new WebhookAddressError(`${host} resolves to ${internal}, a loopback, private, link-local or metadata address; ` +
      'set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow it')
  }
}

/**
 * The DNS look-up of a webhook connection, refusing private addresses: the address checked is the
 * address connected to (no second look-up a rebinding DNS could answer differently).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error !== null) {
      callback(error, '', 0)
      return
    }
    const internal = addresses.find((entry) => isPrivateAddress(entry.address))
    if (internal !== undefined) {
      callback(new WebhookAddressError(`${hostname} resolves to ${internal.address}, a private address`), '', 0)
      return
    }
    const wantsAll = (options as { all?: boolean }).all === true
    const first = addresses[0]
    if (wantsAll) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses)
    else if (first === undefined) callback(new WebhookAddressError(`${hostname} has no address`), '', 0)
    else callback(null, first.address, first.family)
  })
}
