import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { freshDatabaseUrl } from '../helpers/databases.js'
import { bearer, loadEnv, strongApiKey } from '../helpers/live-server.js'
import { PROJECT_ROOT, serverProcesses } from '../helpers/processes.js'

// The README's "API at a glance" block, run as a newcomer runs it: each curl command through bash, with
// KEY and BASE set as its first lines say, against a real server. The two placeholders the README
// leaves to the reader are filled from the answers before them: the cursor of the Link header the list
// before it answered, and the ETag the PATCH before it answered.

const run = promisify(execFile)

interface Answer { status: number, headers: Map<string, string>, body: string }

/** The README's shell block under "## The API at a glance", as commands (continuation lines joined, comments and assignments left out). */
async function readmeCommands (): Promise<string[]> {
  const readme = await readFile(join(PROJECT_ROOT, 'README.md'), 'utf8')
  const section = readme.split('## The API at a glance')[1]?.split('\n## ')[0] ?? ''
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(block !== undefined, 'README.md: "The API at a glance" holds no ```sh block')
  return block.replace(/\\\n\s*/g, '').split('\n').map((line) => line.trim()).filter((line) => line.startsWith('curl '))
}

/** curl -i's output: the last status line (after any 100 Continue), its headers, the body. */
function parseAnswer (output: string): Answer {
  const [head = '', ...rest] = output.split(/\r\n\r\n/)
  const lines = head.split('\r\n')
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(lines[0] ?? '')?.[1])
  const headers = new Map(lines.slice(1).map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as [string, string]
  }))
  return { status, headers, body: rest.join('\r\n\r\n') }
}

describe('README: the API at a glance', () => {
  test('When every curl line of the README runs in order against a fresh server (25 pets in it), then each gets the 2xx its comment promises', async (t) => {
    const servers = serverProcesses(t)
    const apiKey = strongApiKey()
    const server = await servers.start(loadEnv(await freshDatabaseUrl(t, 'sqlite'), apiKey))
    // enough available pets that the list has a next page and pet 2 can be ordered
    for (let i = 1; i <= 25; i++) {
      const res = await fetch(`${server.baseUrl}/v1/pets`, { method: 'POST', headers: { ...bearer(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `seed-${i}`, categoryId: 1 }) })
      assert.equal(res.status, 201)
    }

    const commands = await readmeCommands()
    assert.ok(commands.length >= 10, `only ${commands.length} curl lines found`)
    let previous: Answer | undefined
    const statuses: number[] = []
    for (const command of commands) {
      let filled = command
      if (filled.includes('cursor=…')) {
        const cursor = /[?&]cursor=([^&>]+)/.exec(previous?.headers.get('link') ?? '')?.[1]
        assert.ok(cursor !== undefined, `"${command}" follows a Link header, and the answer before it had none`)
        filled = filled.replace('cursor=…', `cursor=${cursor}`)
      }
      if (filled.includes('If-Match: "…"')) {
        const etag = previous?.headers.get('etag')
        assert.ok(etag !== undefined, `"${command}" sends the ETag of the answer before it, which had none`)
        filled = filled.replace('If-Match: "…"', `If-Match: ${etag}`)
      }
      assert.doesNotMatch(filled, /…/, `a placeholder this test does not fill: ${command}`)
      if (/ -N /.test(filled)) {
        // a stream never ends: followed for 2 s (curl's exit 28 is that limit), it must have opened and carried the pets' events
        const { stdout } = await run('bash', ['-c', `set -u; ${filled.replace(/^curl /, 'curl --max-time 2 ').replace(/\s+#.*$/, '')} || [ $? -eq 28 ]`], { env: { ...process.env, KEY: apiKey, BASE: `${server.baseUrl}/v1` } })
        assert.match(stdout, /^retry: \d+\n/, `${command}\n→ ${stdout.slice(0, 200)}`)
        assert.match(stdout, /\nid: 1\nevent: pet\.created\ndata: \{"id":1,/, `${command}: the first event`)
        statuses.push(200)
        continue
      }
      const { stdout } = await run('bash', ['-c', `set -eu; ${filled}`], { env: { ...process.env, KEY: apiKey, BASE: `${server.baseUrl}/v1` } })
      const answer = parseAnswer(stdout)
      assert.ok(answer.status >= 200 && answer.status < 300, `${command}\n→ ${answer.status} ${answer.body}`)
      if (command.includes(' -d ') && !command.includes('-X PATCH')) assert.equal(answer.status, 201, command)
      statuses.push(answer.status)
      previous = answer
    }
    t.diagnostic(`${commands.length} curl lines: ${statuses.join(', ')}`)
  })
})
