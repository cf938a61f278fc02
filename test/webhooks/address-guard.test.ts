import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isPrivateAddress } from '../../src/capabilities/webhooks/address-guard.js'

// the ranges docs/operations.md names, each at its edges, and the addresses just outside them: a pure
// function, nothing is sent anywhere
const REFUSED: Record<string, readonly string[]> = {
  'loopback 127.0.0.0/8': ['127.0.0.1', '127.255.255.254'],
  'private 10/8': ['10.0.0.0', '10.1.2.3', '10.255.255.255'],
  'private 172.16/12': ['172.16.0.0', '172.31.255.255'],
  'private 192.168/16': ['192.168.0.0', '192.168.255.255'],
  'link-local and metadata 169.254/16': ['169.254.0.0', '169.254.169.254', '169.254.255.255'],
  'carrier-grade NAT 100.64/10': ['100.64.0.0', '100.127.255.255'],
  'multicast 224/4': ['224.0.0.1', '239.255.255.250'],
  'loopback ::1': ['::1'],
  'unique local fc00::/7 (AWS metadata fd00:ec2::254)': ['fc00::1', 'fd00:ec2::254', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'link-local fe80::/10': ['fe80::1', 'febf:ffff::1'],
  'multicast ff00::/8': ['ff02::1'],
  'an IPv4-mapped IPv6 address of a refused one': ['::ffff:10.1.2.3', '::ffff:169.254.169.254', '::ffff:127.0.0.1']
}
const ALLOWED = ['93.184.215.14', '8.8.8.8', '9.255.255.255', '11.0.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0',
  '169.253.255.255', '169.255.0.0', '100.63.255.255', '100.128.0.0', '223.255.255.255', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:93.184.215.14']

describe('the webhook address check', () => {
  test('When an address is loopback, private, link-local, unique-local, carrier-grade NAT, multicast or metadata, then it is refused; public addresses next to those ranges are not', () => {
    for (const [range, addresses] of Object.entries(REFUSED)) {
      for (const address of addresses) assert.equal(isPrivateAddress(address), true, `${address} (${range}) is allowed`)
    }
    for (const address of ALLOWED) assert.equal(isPrivateAddress(address), false, `${address} is refused`)
  })
})
