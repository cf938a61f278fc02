import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'

/** A range of addresses a webhook never reaches unless the operator opens it (`WEBHOOK_ALLOWED_NETWORKS`). */
export interface SpecialRange {
  readonly network: string
  readonly prefix: number
  readonly family: 'ipv4' | 'ipv6'
  /** Its name in its registry, and the document that set it aside. */
  readonly name: string
}

/**
 * Every entry of IANA's IPv4 and IPv6 Special-Purpose Address Registries (as of 2026; RFC 6890 made
 * them), plus the multicast blocks, the IPv4-compatible form RFC 4291 deprecated (`[::127.0.0.1]`
 * reaches 127.0.0.1 on some stacks) and the deprecated site-local block. Nested entries (192.0.0.0/29
 * inside 192.0.0.0/24, the 2001::/23 assignments) are covered by the block around them. A webhook is
 * the service calling a URL a key holder chose: none of these is a receiver on the public internet.
 */
export const SPECIAL_RANGES: readonly SpecialRange[] = [
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', name: '"This network" (RFC 791)' },
  { network: '10.0.0.0', prefix: 8, family: 'ipv4', name: 'Private-Use (RFC 1918)' },
  { network: '100.64.0.0', prefix: 10, family: 'ipv4', name: 'Shared Address Space, carrier-grade NAT (RFC 6598)' },
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', name: 'Loopback (RFC 1122)' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', name: 'Link Local, cloud metadata services (RFC 3927)' },
  { network: '172.16.0.0', prefix: 12, family: 'ipv4', name: 'Private-Use (RFC 1918)' },
  { network: '192.0.0.0', prefix: 24, family: 'ipv4', name: 'IETF Protocol Assignments, DS-Lite, NAT64 discovery (RFC 6890)' },
  { network: '192.0.2.0', prefix: 24, family: 'ipv4', name: 'Documentation, TEST-NET-1 (RFC 5737)' },
  { network: '192.31.196.0', prefix: 24, family: 'ipv4', name: 'AS112-v4 (RFC 7535)' },
  { network: '192.52.193.0', prefix: 24, family: 'ipv4', name: 'AMT (RFC 7450)' },
  { network: '192.88.99.0', prefix: 24, family: 'ipv4', name: 'Deprecated 6to4 Relay Anycast (RFC 7526)' },
  { network: '192.168.0.0', prefix: 16, family: 'ipv4', name: 'Private-Use (RFC 1918)' },
  { network: '192.175.48.0', prefix: 24, family: 'ipv4', name: 'Direct Delegation AS112 Service (RFC 7534)' },
  { network: '198.18.0.0', prefix: 15, family: 'ipv4', name: 'Benchmarking (RFC 2544)' },
  { network: '198.51.100.0', prefix: 24, family: 'ipv4', name: 'Documentation, TEST-NET-2 (RFC 5737)' },
  { network: '203.0.113.0', prefix: 24, family: 'ipv4', name: 'Documentation, TEST-NET-3 (RFC 5737)' },
  { network: '224.0.0.0', prefix: 4, family: 'ipv4', name: 'Multicast (RFC 5771)' },
  { network: '240.0.0.0', prefix: 4, family: 'ipv4', name: 'Reserved, and Limited Broadcast 255.255.255.255 (RFC 1112, RFC 919)' },
  { network: '::', prefix: 96, family: 'ipv6', name: 'Unspecified, Loopback and IPv4-compatible addresses (RFC 4291)' },
  { network: '::ffff:0:0', prefix: 96, family: 'ipv6', name: 'IPv4-mapped Address (RFC 4291)' },
  { network: '64:ff9b::', prefix: 96, family: 'ipv6', name: 'IPv4-IPv6 Translation, NAT64 (RFC 6052)' },
  { network: '64:ff9b:1::', prefix: 48, family: 'ipv6', name: 'Local-use IPv4/IPv6 Translation (RFC 8215)' },
  { network: '100::', prefix: 64, family: 'ipv6', name: 'Discard-Only Address Block (RFC 6666)' },
  { network: '100:0:0:1::', prefix: 64, family: 'ipv6', name: 'Dummy IPv6 Prefix (RFC 9780)' },
  { network: '2001::', prefix: 23, family: 'ipv6', name: 'IETF Protocol Assignments: TEREDO, benchmarking, ORCHID, AMT, AS112 (RFC 2928)' },
  { network: '2001:db8::', prefix: 32, family: 'ipv6', name: 'Documentation (RFC 3849)' },
  { network: '2002::', prefix: 16, family: 'ipv6', name: '6to4, an IPv4 address inside (RFC 3056)' },
  { network: '2620:4f:8000::', prefix: 48, family: 'ipv6', name: 'Direct Delegation AS112 Service (RFC 7534)' },
  { network: '3fff::', prefix: 20, family: 'ipv6', name: 'Documentation (RFC 9637)' },
  { network: '5f00::', prefix: 16, family: 'ipv6', name: 'Segment Routing (SRv6) SIDs (RFC 9602)' },
  { network: 'fc00::', prefix: 7, family: 'ipv6', name: 'Unique-Local, cloud metadata services (RFC 4193)' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', name: 'Link-Local Unicast (RFC 4291)' },
  { network: 'fec0::', prefix: 10, family: 'ipv6', name: 'Site-Local, deprecated (RFC 3879)' },
  { network: 'ff00::', prefix: 8, family: 'ipv6', name: 'Multicast (RFC 4291)' }
]

/** One BlockList per range, so that a refusal can name its range. */
const RANGE_LISTS = SPECIAL_RANGES.map((range) => {
  const list = new BlockList()
  list.addSubnet(range.network, range.prefix, range.family)
  return { range, list }
})

/** The special-purpose range `address` lies in; undefined for an address of the public internet (or not an address). */
export function specialRangeOf (address: string): SpecialRange | undefined {
  const family = isIP(address) === 4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : undefined
  if (family === undefined) return undefined
  return RANGE_LISTS.find(({ range, list }) => range.family === family && list.check(address, family))?.range
}

/**
 * Whether `address` is one of this host's own interface addresses (a public address of the machine
 * the service runs on reaches the machine itself). Read at each check: interfaces come and go.
 */
export function isOwnAddress (address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  const own = new BlockList()
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) own.addAddress(entry.address, entry.family === 'IPv4' ? 'ipv4' : 'ipv6')
  }
  return own.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/** `WEBHOOK_ALLOWED_NETWORKS` (CIDRs the configuration checked) as a BlockList. */
export function networkList (cidrs: readonly string[]): BlockList {
  const list = new BlockList()
  for (const cidr of cidrs) {
    const [network = '', prefix = ''] = cidr.split('/')
    list.addSubnet(network, Number(prefix), isIP(network) === 4 ? 'ipv4' : 'ipv6')
  }
  return list
}
