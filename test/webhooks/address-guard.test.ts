import assert from 'node:assert/strict'
import { isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { describe, test } from 'node:test'
import { addressRefusal, type AddressSettings } from '../../src/capabilities/webhooks/address-guard.js'
import { isOwnAddress, SPECIAL_RANGES, type SpecialRange } from '../../src/capabilities/webhooks/special-addresses.js'

// The range table itself, row by row: its first, middle and last addresses refused, naming the row,
// and the addresses just outside it allowed unless another row holds them. Pure functions: nothing is
// sent anywhere. The arithmetic here is the test's own (BigInt), not the BlockList the code uses.

const GUARDED: AddressSettings = { allowPrivateNetworks: false, allowedNetworks: [] }

function bits (family: SpecialRange['family']): number {
  return family === 'ipv4' ? 32 : 128
}

function toBigInt (address: string): bigint {
  if (isIP(address) === 4) return address.split('.').reduce((n, part) => (n << 8n) + BigInt(part), 0n)
  const [head = '', tail] = address.split('::')
  const groups = (text: string | undefined): string[] => text === undefined || text === '' ? [] : text.split(':')
  const left = groups(head)
  const right = groups(tail)
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return all.reduce((n, group) => (n << 16n) + BigInt(`0x${group}`), 0n)
}

function fromBigInt (value: bigint, family: SpecialRange['family']): string {
  if (family === 'ipv4') return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.')
  return [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((value >> shift) & 0xffffn).toString(16)).join(':')
}

function bounds (range: SpecialRange): { first: bigint, last: bigint } {
  const first = toBigInt(range.network)
  return { first, last: first + (1n << BigInt(bits(range.family) - range.prefix)) - 1n }
}

function inTable (value: bigint, family: SpecialRange['family']): boolean {
  return SPECIAL_RANGES.some((range) => {
    if (range.family !== family) return false
    const { first, last } = bounds(range)
    return value >= first && value <= last
  })
}

describe('the webhook address guard', () => {
  test('When an address lies in a row of the special-purpose table, then it is refused naming that row; the addresses just outside each row are allowed unless another row holds them', () => {
    for (const range of SPECIAL_RANGES) {
      const { first, last } = bounds(range)
      assert.equal(toBigInt(range.network), first, `${range.network}/${range.prefix}: the network address has host bits set`)
      for (const value of [first, first + (last - first) / 2n, last]) {
        const address = fromBigInt(value, range.family)
        const refusal = addressRefusal(address, GUARDED)
        assert.ok(refusal?.includes(`${range.network}/${range.prefix}`), `${address} (${range.name}): ${refusal ?? 'allowed'}`)
      }
      for (const value of [first - 1n, last + 1n]) {
        if (value < 0n || value >= 1n << BigInt(bits(range.family)) || inTable(value, range.family)) continue
        const address = fromBigInt(value, range.family)
        assert.equal(addressRefusal(address, GUARDED), undefined, `${address}, just outside ${range.network}/${range.prefix}, is refused`)
      }
    }
  })

  test('When an address is written in one of its other forms (IPv4-compatible, IPv4-mapped, 6to4, NAT64, TEREDO), then it is refused', () => {
    for (const address of ['::127.0.0.1', '::7f00:1', '::ffff:127.0.0.1', '::ffff:8.8.8.8', '2002:7f00:1::', '2002:a9fe:a9fe::1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2']) {
      assert.notEqual(addressRefusal(address, GUARDED), undefined, `${address} is allowed`)
    }
    for (const address of ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111', '2001:4860:4860::8888']) {
      assert.equal(addressRefusal(address, GUARDED), undefined, `${address} is refused`)
    }
  })

  test('When an address is one of this host\'s own interface addresses, then it is refused; WEBHOOK_ALLOWED_NETWORKS opens exactly the networks it names', () => {
    const own = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []).map((entry) => entry.address)
    assert.ok(own.length > 0)
    for (const address of own) {
      assert.equal(isOwnAddress(address), true, address)
      assert.notEqual(addressRefusal(address, GUARDED), undefined, `${address}, this host's own, is allowed`)
    }
    assert.equal(isOwnAddress('8.8.8.8'), false)

    const opened: AddressSettings = { allowPrivateNetworks: false, allowedNetworks: ['192.0.2.0/25', 'fd00:1::/64'] }
    assert.equal(addressRefusal('192.0.2.1', opened), undefined)
    assert.equal(addressRefusal('192.0.2.127', opened), undefined)
    assert.match(addressRefusal('192.0.2.128', opened) ?? '', /192\.0\.2\.0\/24, Documentation/)
    assert.equal(addressRefusal('fd00:1::5', opened), undefined)
    assert.match(addressRefusal('fd00:2::5', opened) ?? '', /fc00::\/7/)
    assert.equal(addressRefusal('127.0.0.1', { allowPrivateNetworks: true, allowedNetworks: [] }), undefined, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS lifts the guard')
  })
})
