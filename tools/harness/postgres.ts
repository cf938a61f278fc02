import pg from 'pg'

/** Runs `work` on a fresh connection to `url`, then closes it. */
export async function withPostgres<T> (work: (client: pg.Client) => Promise<T>, url: string): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** `url` with its search_path set to `schema`, the way an operator would select one. */
export function withSearchPath (url: string, schema: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('options', `-c search_path=${schema}`)
  return parsed.toString()
}
