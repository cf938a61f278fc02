import { isIPv4, isIPv6 } from 'node:net'

/**
 * The unit a per-address limit counts: an IPv4 address (also when written IPv4-mapped), or
 * the /64 network of an IPv6 address (one host usually holds a whole /64, so single IPv6
 * addresses cost nothing to change).
 */
export function addressBucket (ip: string): string {
  if (isIPv4(ip) || !isIPv6(ip)) return ip
  const groups = ipv6Groups(ip)
  if (groups === undefined) return ip
  // ::ffff:a.b.c.d in any spelling is the IPv4 client a.b.c.d
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6)
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address, whatever its spelling; undefined if it has a zone. */
function ipv6Groups (ip: string): number[] | undefined {
  // the WHATWG URL parser writes IPv6 in one canonical form: hex groups only, one "::" at most
  let canonical: string
  try {
    canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1)
  } catch {
    return undefined
  }
  const [head = '', tail] = canonical.split('::')
  const parse = (part: string): number[] => part === '' ? [] : part.split(':').map((group) => parseInt(group, 16))
  const headGroups = parse(head)
  if (tail === undefined) return headGroups
  const tailGroups = parse(tail)
  return [...headGroups, ...Array<number>(8 - headGroups.length - tailGroups.length).fill(0), ...tailGroups]
}
