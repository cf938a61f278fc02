/** The connection string without password or parameters (but with a chosen schema), for logs. */
export function describePostgres (url: string): string {
  const parsed = new URL(url)
  const user = parsed.username === '' ? '' : `${parsed.username}@`
  const schema = /search_path\s*=\s*([^\s,]+)/.exec(parsed.searchParams.get('options') ?? '')?.[1]
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${schema === undefined ? '' : ` (schema ${schema})`}`
}
