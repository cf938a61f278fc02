import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../../src/infra/config/config.js'
import { baseUrlFor } from '../../../src/infra/http/base-url.js'

const PUBLIC = 'https://api.example.com/v1'
const STAGING = 'https://staging.example.com/v1'

test('When requests come through the staging host among many others, then each gets its own deployment\'s base, the staging host\'s also after a hundred other hosts', () => {
  const config = loadConfig({ PUBLIC_BASE_URL: PUBLIC, STAGING_BASE_URL: STAGING })
  assert.equal(baseUrlFor(config, 'staging.example.com'), STAGING)
  // more hosts than the verdicts kept: the ones after them are decided each time, alike
  for (let i = 0; i < 100; i++) assert.equal(baseUrlFor(config, `host-${i}.example.com`), PUBLIC)
  assert.equal(baseUrlFor(config, 'staging.example.com'), STAGING)
  assert.equal(baseUrlFor(config, 'staging.example.com:443'), STAGING, 'the scheme\'s default port, explicit')
  assert.equal(baseUrlFor(config, 'STAGING.example.com'), STAGING, 'a host name in another case')
  assert.equal(baseUrlFor(config, 'staging.example.com:8443'), PUBLIC, 'another port')
  assert.equal(baseUrlFor(config, 'not a host'), PUBLIC, 'a Host that is no host')
  assert.equal(baseUrlFor(config, undefined), PUBLIC)
  // another configuration, another staging address: nothing decided for the first is reused
  const other = loadConfig({ PUBLIC_BASE_URL: PUBLIC, STAGING_BASE_URL: 'https://host-1.example.com/v1' })
  assert.equal(baseUrlFor(other, 'host-1.example.com'), 'https://host-1.example.com/v1')
})
