// Loaded with --import into a server or CLI a test starts (see dns-answers.ts): the look-ups of the names
// in TEST_DNS_ANSWERS ({"name": "address"}) get that address, as a resolver's answer would, without
// asking one; every other name is looked up as usual. Plain JavaScript: it runs inside the build, without tsx.
import dns from 'node:dns'
import { syncBuiltinESMExports } from 'node:module'
import { isIP } from 'node:net'

const answers = JSON.parse(process.env.TEST_DNS_ANSWERS ?? '{}')
const resolverLookup = dns.lookup

dns.lookup = function lookupWithAnswers (hostname, options, callback) {
  const address = Object.hasOwn(answers, hostname) ? answers[hostname] : undefined
  if (address === undefined) return resolverLookup.call(this, hostname, options, callback)
  const done = typeof options === 'function' ? options : callback
  const all = typeof options === 'object' && options !== null && options.all === true
  const family = isIP(address)
  process.nextTick(() => { if (all) done(null, [{ address, family }]); else done(null, address, family) })
  return {}
}
// `import { lookup } from 'node:dns'` (the service's address guard) sees the replacement too
syncBuiltinESMExports()
