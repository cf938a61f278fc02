import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { addressBucket } from '../../src/capabilities/rate-limits/client-address.js'

describe('addressBucket', () => {
  test('When the address is IPv4, then the bucket is the address itself', () => {
    assert.equal(addressBucket('10.1.1.1'), '10.1.1.1')
    assert.equal(addressBucket('192.0.2.255'), '192.0.2.255')
    assert.notEqual(addressBucket('10.1.1.1'), addressBucket('10.1.1.2'))
  })

  test('When the address is IPv4-mapped IPv6, then the bucket is the IPv4 address', () => {
    assert.equal(addressBucket('::ffff:1.2.3.4'), '1.2.3.4')
    assert.equal(addressBucket('::FFFF:1.2.3.4'), '1.2.3.4')
    assert.equal(addressBucket('::ffff:1.2.3.4'), addressBucket('1.2.3.4'))
  })

  test('When two IPv6 addresses share their first 64 bits, then they share a bucket', () => {
    assert.equal(addressBucket('2001:db8::1'), '2001:db8:0:0::/64')
    assert.equal(addressBucket('2001:db8::1'), addressBucket('2001:db8::2'))
    assert.equal(addressBucket('2001:db8::1'), addressBucket('2001:db8:0:0:ffff:ffff:ffff:ffff'))
    assert.equal(addressBucket('2001:db8:1:2:3:4:5:6'), addressBucket('2001:db8:1:2::'))
  })

  test('When two IPv6 addresses differ within their first 64 bits, then their buckets differ', () => {
    assert.notEqual(addressBucket('2001:db8::1'), addressBucket('2001:db8:0:1::1'))
    assert.notEqual(addressBucket('2001:db8::1'), addressBucket('2001:db9::1'))
    assert.notEqual(addressBucket('2001:db8:1::'), addressBucket('2001:db8:0:1::'))
  })

  test('When the same IPv6 network is written compressed or expanded, then the bucket is the same', () => {
    const expected = '2001:db8:0:0::/64'
    for (const written of [
      '2001:db8::1',
      '2001:db8:0:0:0:0:0:1',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '2001:db8:0::1',
      '2001:db8::0:0:1'
    ]) {
      assert.equal(addressBucket(written), expected, written)
    }
    assert.equal(addressBucket('fe80::'), addressBucket('fe80:0:0:0:0:0:0:0'))
    assert.equal(addressBucket('::1'), '0:0:0:0::/64')
    assert.equal(addressBucket('::'), '0:0:0:0::/64')
  })

  test('When an IPv6 address is written in upper or mixed case, then the bucket is the lower-case one', () => {
    assert.equal(addressBucket('2001:DB8:ABCD:EF01::1'), '2001:db8:abcd:ef01::/64')
    assert.equal(addressBucket('2001:Db8:aBcD:Ef01::1'), addressBucket('2001:db8:abcd:ef01::2'))
  })

  test('When the text is not an IP address, then it is its own bucket', () => {
    assert.equal(addressBucket('unknown'), 'unknown')
    assert.equal(addressBucket(''), '')
  })
})
