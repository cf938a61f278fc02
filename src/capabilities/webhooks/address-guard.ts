import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { type BlockList, isIP, type LookupFunction } from 'node:net'
import type { WebhookSettings } from '../../infra/config/config.js'
import { isOwnAddress, networkList, specialRangeOf } from './special-addresses.js'

/** What decides which addresses a webhook may reach. */
export type AddressSettings = Pick<WebhookSettings, 'allowPrivateNetworks' | 'allowedNetworks'>

/** A webhook URL that may not be called; the message says why, for `webhooks add` and for the delivery's log. */
export class WebhookAddressError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'WebhookAddressError'
  }
}

const allowedLists = new WeakMap<readonly string[], BlockList>()

function allowedList (settings: AddressSettings): BlockList {
  let list = allowedLists.get(settings.allowedNetworks)
  if (list === undefined) {
    list = networkList(settings.allowedNetworks)
    allowedLists.set(settings.allowedNetworks, list)
  }
  return list
}

/**
 * Why a webhook may not connect to `address`, or undefined when it may: an address of a special-purpose
 * range or of this host's own interfaces is refused unless `WEBHOOK_ALLOWED_NETWORKS` names a network
 * holding it (or `WEBHOOK_ALLOW_PRIVATE_NETWORKS` lifts the guard altogether).
 */
export function addressRefusal (address: string, settings: AddressSettings): string | undefined {
  const reason = refusalReason(address, settings)
  return reason === undefined ? undefined : `${address} is ${reason}`
}

/** {@link addressRefusal}'s reason alone: `in 10.0.0.0/8, Private-Use (RFC 1918)`. */
function refusalReason (address: string, settings: AddressSettings): string | undefined {
  if (settings.allowPrivateNetworks) return undefined
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  if (allowedList(settings).check(address, family === 4 ? 'ipv4' : 'ipv6')) return undefined
  const range = specialRangeOf(address)
  if (range !== undefined) return `in ${range.network}/${range.prefix}, ${range.name}`
  if (isOwnAddress(address)) return 'an address of this host\'s own interfaces'
  return undefined
}

const NO_NETWORKS: readonly string[] = Object.freeze([])

/**
 * The setting that lets a webhook reach `address`: `WEBHOOK_ALLOWED_NETWORKS` (a network it names holds the
 * address), `WEBHOOK_ALLOW_PRIVATE_NETWORKS`, or undefined when the guard lets it through without either.
 */
export function addressAllowedBy (address: string, settings: AddressSettings): 'WEBHOOK_ALLOWED_NETWORKS' | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | undefined {
  if (refusalReason(address, { allowPrivateNetworks: false, allowedNetworks: NO_NETWORKS }) === undefined) return undefined
  return refusalReason(address, { allowPrivateNetworks: false, allowedNetworks: settings.allowedNetworks }) === undefined
    ? 'WEBHOOK_ALLOWED_NETWORKS'
    : 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'
}

/** Why `host`, which resolves to `address`, is refused: said the same way at add and at delivery. */
function resolvedRefusal (host: string, address: string, settings: AddressSettings): string | undefined {
  if (host === address) return addressRefusal(address, settings)
  const reason = refusalReason(address, settings)
  return reason === undefined ? undefined : `${host} resolves to ${address}, which is ${reason}`
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

const OPEN_IT = 'name its network in WEBHOOK_ALLOWED_NETWORKS to allow it'

/**
 * Throws unless every address `host` resolves to may be reached, and returns those addresses. Used at `webhooks add`;
 * at delivery the connection's own look-up is guarded ({@link guardedLookup}), so a name re-pointed since cannot slip through.
 */
export async function assertReachableHost (host: string, settings: AddressSettings): Promise<string[]> {
  const addresses = await resolveHost(host)
  for (const address of addresses) {
    const refusal = resolvedRefusal(host, address, settings)
    if (refusal !== undefined) throw new WebhookAddressError(`${refusal}; ${OPEN_IT}`)
  }
  return addresses
}

/**
 * The DNS look-up of a webhook connection, refusing what {@link addressRefusal} refuses: the address
 * checked is the address connected to (no second look-up a rebinding DNS could answer differently).
 */
export function guardedLookup (settings: AddressSettings): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error !== null) {
        callback(error, '', 0)
        return
      }
      for (const entry of addresses) {
        const refusal = resolvedRefusal(hostname, entry.address, settings)
        if (refusal !== undefined) {
          callback(new WebhookAddressError(refusal), '', 0)
          return
        }
      }
      const wantsAll = (options as { all?: boolean }).all === true
      const first = addresses[0]
      if (wantsAll) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses)
      else if (first === undefined) callback(new WebhookAddressError(`${hostname} has no address`), '', 0)
      else callback(null, first.address, first.family)
    })
  }
}
