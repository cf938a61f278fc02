import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { tempDir } from './temp-dir.js'

/**
 * `REQUIRE_NETWORK_ISOLATION=1` (CI sets it; it runs as root): a test that needs {@link isolatedNode} fails
 * where it cannot have it, instead of skipping.
 */
export const NETWORK_ISOLATION_REQUIRED = process.env.REQUIRE_NETWORK_ISOLATION === '1'

/** Why a test cannot run a process with no network but a loopback of its own here (unshare -n needs root), or undefined when it can. */
export function networkIsolationMissing (): string | undefined {
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore', env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/sbin` } })
  return probe.status === 0 ? undefined : 'needs unshare -n and ip (root, util-linux, iproute2): the sender must run where no packet can leave the machine'
}

/**
 * A stand-in for the node binary (a server's `node` option) that runs node in a network namespace of its
 * own (`unshare -n`): its loopback, brought up, and no other interface or route, so whatever the process
 * sends to an address that is not its own loopback fails at once (ENETUNREACH) and never leaves the machine.
 * It reaches PostgreSQL through the server's Unix socket ({@link postgresOverUnixSocket}), not over TCP.
 */
export async function isolatedNode (t: TestContext): Promise<string> {
  const path = join(await tempDir(t), 'isolated-node')
  await writeFile(path, '#!/bin/sh\n' +
    'PATH="$PATH:/usr/sbin:/sbin"\n' +
    `exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh '${process.execPath}' "$@"\n`)
  await chmod(path, 0o755)
  return path
}

/** Where the PostgreSQL server of `url` keeps its Unix socket, if it is on this machine. */
function socketDirectoryOf (url: string): string | undefined {
  const port = new URL(url).port || '5432'
  return ['/var/run/postgresql', '/run/postgresql', '/tmp'].find((dir) => existsSync(join(dir, `.s.PGSQL.${port}`)))
}

/** `url` (a TCP one on this machine) reaching the same server and database through its Unix socket, which a network namespace does not cut; undefined when there is no such socket. */
export function postgresOverUnixSocket (url: string): string | undefined {
  const dir = socketDirectoryOf(url)
  if (dir === undefined) return undefined
  const parsed = new URL(url)
  parsed.searchParams.set('host', dir)
  return parsed.toString()
}
