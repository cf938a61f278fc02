import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parse } from 'yaml'
import { CONFIG_VARIABLES, loadConfig } from '../../src/infra/config/config.js'
import { PROJECT_ROOT } from '../helpers/processes.js'

/** What staging and production may differ in (docs/configuration.md#staging-and-production names each). */
const STAGING_DIFFERENCES = ['COMPOSE_PROJECT_NAME', 'POSTGRES_PASSWORD', 'PETSTORE_PORT_1', 'PETSTORE_PORT_2', 'PUBLIC_BASE_URL', 'STAGING_BASE_URL']

interface ComposeService {
  image?: string
  build?: unknown
  ports?: string[]
  environment?: Record<string, unknown>
}

/**
 * `text` with its variables replaced as Compose interpolates them from an env file: `${VAR}`,
 * `${VAR:-default}` (unset or empty), `${VAR-default}` (unset), `${VAR:?message}` and `${VAR?message}`
 * (an error), `$$` a dollar sign.
 */
function interpolate (text: string, variables: ReadonlyMap<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Z_][A-Z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (_match, name?: string, colon?: string, kind?: string, operand?: string) => {
    if (name === undefined) return '$'
    const value = variables.get(name)
    const missing = value === undefined || (colon === ':' && value === '')
    if (!missing || kind === undefined) return value ?? ''
    if (kind === '?') throw new Error(`${name}: ${operand ?? ''}`)
    return operand ?? ''
  })
}

/** compose.yaml's services as `docker compose --env-file <file>` reads them. */
async function composeServices (variables: ReadonlyMap<string, string>): Promise<Record<string, ComposeService>> {
  return (parse(interpolate(await readProjectFile('compose.yaml'), variables), { merge: true }) as { services: Record<string, ComposeService> }).services
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
    const petstore = Object.entries(compose.services).filter(([, service]) => service.build !== undefined)

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

describe('compose stack, as Compose reads it with each env file', () => {
  test('When staging and production are read, then each runs an image of its own, <project>:<PETSTORE_VERSION>, and links to its own base URL', async () => {
    const deployments = []
    for (const file of ['deploy/production.env.example', 'deploy/staging.env.example']) {
      const variables = await readEnvFile(file)
      const petstore = Object.values(await composeServices(variables)).filter((service) => service.build !== undefined)
      const images = new Set(petstore.map((service) => service.image))
      assert.deepEqual([...images], [`${variables.get('COMPOSE_PROJECT_NAME')!}:${variables.get('PETSTORE_VERSION')!}`], `${file}: one image, named for the deployment and the version`)
      assert.match(variables.get('PETSTORE_VERSION') ?? '', /^\d+\.\d+\.\d+/, `${file}: PETSTORE_VERSION is a version`)
      deployments.push({ file, image: [...images][0], baseUrl: petstore[0]?.environment?.PUBLIC_BASE_URL })
    }
    const [production, staging] = deployments
    assert.notEqual(staging!.image, production!.image, 'staging\'s build would replace production\'s image')
    assert.notEqual(staging!.baseUrl, production!.baseUrl, 'staging links to production')
    assert.match(String(staging!.baseUrl), /staging/)
    const withoutVersion = new Map([...await readEnvFile('deploy/staging.env.example')].filter(([name]) => name !== 'PETSTORE_VERSION'))
    await assert.rejects(composeServices(withoutVersion), /PETSTORE_VERSION/, 'a deployment without PETSTORE_VERSION would run a shared default tag')
  })

  test('When the ports are read, then every published port is bound to PETSTORE_BIND_ADDRESS, 127.0.0.1 unless set, never every interface', async () => {
    for (const file of ['deploy/production.env.example', 'deploy/staging.env.example']) {
      const variables = await readEnvFile(file)
      for (const [address, expected] of [[variables.get('PETSTORE_BIND_ADDRESS'), variables.get('PETSTORE_BIND_ADDRESS')], [undefined, '127.0.0.1'], ['10.0.0.5', '10.0.0.5']] as const) {
        const chosen = new Map(variables)
        if (address === undefined) chosen.delete('PETSTORE_BIND_ADDRESS')
        else chosen.set('PETSTORE_BIND_ADDRESS', address)
        const published = Object.entries(await composeServices(chosen)).flatMap(([name, service]) => (service.ports ?? []).map((port) => ({ name, port })))
        assert.deepEqual(published.map(({ name }) => name).sort(), ['petstore-1', 'petstore-2'])
        for (const { name, port } of published) {
          // Compose's short syntax: [HOST_IP:]HOST_PORT:CONTAINER_PORT; without HOST_IP, every interface
          assert.match(port, /^\d+\.\d+\.\d+\.\d+:\d+:8080$/, `${file}: ${name} publishes ${port} on every interface`)
          assert.equal(port.split(':')[0], expected, `${file}: ${name}`)
        }
      }
      assert.notEqual(variables.get('PETSTORE_BIND_ADDRESS'), '0.0.0.0', `${file} trusts X-Forwarded-For (TRUST_PROXY=${variables.get('TRUST_PROXY') ?? ''}) on every interface`)
    }
  })
})

describe('container image (Dockerfile)', () => {
  test('When the Dockerfile is read, then it builds with the release step and runs it as the image must', async () => {
    const dockerfile = await readProjectFile('Dockerfile')
    const stages = dockerfile.split(/^FROM /m).slice(1)
    const runtime = stages.at(-1) ?? ''

    assert.equal(stages.length, 2, 'multi-stage: a build stage and a runtime stage')
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:24\.\d+\.\d+-[a-z]+-slim$/m, 'a Node 24 slim base pinned by version')
    // and by digest once one is recorded (docs/operations.md#container-image): both stages take it, never a made-up one
    assert.match(dockerfile, /^ARG NODE_IMAGE_DIGEST=(sha256:[0-9a-f]{64})?$/m)
    assert.equal(dockerfile.match(/^FROM \$\{NODE_IMAGE\}\$\{NODE_IMAGE_DIGEST:\+@\}\$\{NODE_IMAGE_DIGEST\}( AS build)?$/gm)?.length, 2, 'both stages on the pinned base')
    assert.match(stages[0]!, /npm run release -- /)
    // the build stage compiles better-sqlite3 where no prebuilt binary fits; the manifests and npm ci come before the sources
    assert.match(stages[0]!, /apt-get install -y --no-install-recommends (?=.*\bpython3\b)(?=.*\bmake\b)(?=.*\bg\+\+).*$/m)
    const build = stages[0]!.split('\n')
    const npmCi = build.findIndex((line) => /^RUN npm ci\b/.test(line))
    const sources = build.indexOf('COPY . .')
    assert.ok(npmCi > 0 && sources > npmCi, 'npm ci runs before COPY . .: a change to the sources alone reuses the installed dependencies')
    assert.deepEqual(build.slice(0, npmCi).filter((line) => line.startsWith('COPY ')), ['COPY package.json package-lock.json ./', 'COPY clients/typescript/package.json clients/typescript/'])
    assert.match(runtime, /chmod 700 \/var\/lib\/petstore/, 'the data directory is the service user\'s alone (docs/operations.md#file-modes)')
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
