import { connect } from 'node:net'

/** Sends `request` as it is written to a listening server and returns everything it answers until the connection closes. */
export async function rawExchange (port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('no answer within 5 s')) }, 5_000)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('utf8')) })
    socket.write(request)
  })
}

/** A raw HTTP/1.1 answer taken apart: status, headers (names in lower case) and the body parsed as JSON. */
export function parseRawAnswer (answer: string): { status: number, headers: Record<string, string>, body: unknown } {
  const [head = '', body = ''] = answer.split('\r\n\r\n', 2)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: body === '' ? undefined : JSON.parse(body) }
}
