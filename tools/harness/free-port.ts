import { createServer } from 'node:net'

/** `count` distinct ports nothing listens on right now (the OS picks them; all are held until all are known, then released). */
export async function freePorts (count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer())
  try {
    return await Promise.all(servers.map((server) => new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        if (address === null || typeof address === 'string') reject(new Error('could not find a free port'))
        else resolve(address.port)
      })
    })))
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => { server.close(() => { resolve() }) })))
  }
}

/** A port nothing listens on right now (the OS picks it; it is released before returning). */
export async function freePort (): Promise<number> {
  const [port] = await freePorts(1)
  if (port === undefined) throw new Error('could not find a free port')
  return port
}
