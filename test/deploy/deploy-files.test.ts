import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parse } from 'yaml'
import { CONFIG_VARIABLES, loadConfig } from '../../src/infra/config/config.js'
import { PROJECT_ROOT } from '../helpers/processes.js'

/** What staging and production may differ in (docs/configuration.md#staging-and-production names each). */
const STAGING_DIFFERENCES = ['COMPOSE_PROJECT_NAME', 'POSTGRES_PASSWORD', 'PETSTORE_PORT_1', 'PETSTORE_PORT_2']

interface ComposeService {
  image?: string
  environment?: Record<string, unknown>
}

async function readProjectFile (path: string): Promise<string> {
  return readFile(join(PROJECT_ROOT, path), 'utf8')
}

/** An env file's variables, as `docker compose --env-file` reads them. */
async function readEnvFile (path: string): Promise<Map<string, string>> {
  const variables = new Map<string, string>()
  for (const line of (await readProjectFile(path)).split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line)
    if (match !== null) variables.set(match[1]!, match[2]!)
    else assert.match(line, /^(#.*)?$/, `${path}: a line that is neither a variable nor a comment: ${line}`)
  }
  return variables
}

describe('compose stack (compose.yaml, deploy/*.env.example)', () => {
  test('When compose.yaml is parsed, then every variable it sets on a petstore service is one src/config.ts reads', async () => {
    const compose = parse(await readProjectFile('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> }
    const petstore = Object.entries(compose.services).filter(([, service]) => service.image?.startsWith('petstore:') === true)

    assert.deepEqual(petstore.map(([name]) => name).sort(), ['migrate', 'petstore-1', 'petstore-2'])
    for (const [name, service] of petstore) {
      const unknown = Object.keys(service.environment ?? {}).filter((variable) => !(CONFIG_VARIABLES as readonly string[]).includes(variable))
      assert.deepEqual(unknown, [], `${name} sets variables src/config.ts does not know`)
      assert.ok(Object.keys(service.environment ?? {}).length > 10, `${name} sets too few variables: the anchor was not merged`)
    }
  })

  test('When the env files are read, then each variable is a setting or one compose.yaml uses, and they are valid settings', async () => {
    const composeText = await readProjectFile('compose.yaml')
    const interpolated = new Set([...composeText.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((match) => match[1]!))
    for (const file of ['deploy/production.env.example', 'deploy/staging.env.example']) {
      const variables = await readEnvFile(file)
      const unused = [...variables.keys()].filter((name) => !interpolated.has(name))
      assert.deepEqual(unused, [], `${file} sets variables compose.yaml never uses`)
      const settings = Object.fromEntries([...variables].filter(([name]) => (CONFIG_VARIABLES as readonly string[]).includes(name)))
      assert.doesNotThrow(() => loadConfig({ ...settings, DATABASE_URL: 'postgres://petstore@postgres:5432/petstore' }), file)
    }
  })

  test('When production and staging are compared, then they differ only where docs/configuration.md says', async () => {
    const production = await readEnvFile('deploy/production.env.example')
    const staging = await readEnvFile('deploy/staging.env.example')
    const docs = await readProjectFile('docs/configuration.md')

    assert.deepEqual([...staging.keys()].sort(), [...production.keys()].sort())
    const differing = [...production.keys()].filter((name) => production.get(name) !== staging.get(name)).sort()
    assert.deepEqual(differing, [...STAGING_DIFFERENCES].sort())
    const section = docs.slice(docs.indexOf('## Staging and production'))
    for (const name of differing) assert.ok(section.includes(`\`${name}\``), `docs/configuration.md's staging section does not name ${name}`)
  })
})

describe('container image (Dockerfile)', () => {
  test('When the Dockerfile is read, then it builds with the release step and runs it as the image must', async () => {
    const dockerfile = await readProjectFile('Dockerfile')
    const stages = dockerfile.split(/^FROM /m).slice(1)
    const runtime = stages.at(-1) ?? ''

    assert.equal(stages.length, 2, 'multi-stage: a build stage and a runtime stage')
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:24\.\d+\.\d+-[a-z]+-slim$/m, 'a Node 24 slim base pinned by version')
    assert.match(stages[0]!, /npm run release -- /)
    assert.match(runtime, /^COPY --from=build \/release /m)
    assert.match(runtime, /^USER (?!root|0\b)\w+/m)
    assert.match(runtime, /^EXPOSE 8080$/m)
    assert.match(runtime, /^HEALTHCHECK .*\n?.*CMD \["node", "-e", ".*\/healthz/m)
    assert.match(runtime, /^STOPSIGNAL SIGTERM$/m)
    const dataDir = /DATA_DIR=(\S+)/.exec(runtime)?.[1]
    assert.ok(dataDir !== undefined && runtime.includes(`VOLUME ["${dataDir}"]`), 'the data directory is a volume')
    assert.doesNotMatch(runtime, /apt-get|apk |npm (ci|install)|tsc/, 'the runtime stage installs or compiles nothing')
    const ignored = (await readProjectFile('.dockerignore')).split('\n')
    for (const entry of ['.git', 'node_modules', 'dist', 'data']) assert.ok(ignored.includes(entry), `.dockerignore leaves ${entry} in`)
  })
})
