/** Seeds the store over HTTP before the load, so that reads and the next page have something to find. */

/** The statuses the seeded and created pets take in turn. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const

/** What the seeding left for the request mix to refer to. */
export interface Seed {
  ids: number[]
  /** `/v1/pets?…&cursor=…`: the second page, as the first page's Link header gives it. */
  nextPagePath: string
}

/** Creates `count` pets (10 requests at a time) and follows the first list page's next link. */
export async function seedStore (baseUrl: string, apiKey: string, count: number): Promise<Seed> {
  const ids: number[] = []
  let next = 0
  const createOne = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const response = await fetch(`${baseUrl}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Seed ${i}`, categoryId: 1 + (i % 5), status: PET_STATUSES[i % PET_STATUSES.length] }),
        signal: AbortSignal.timeout(10_000)
      })
      const body = await response.text()
      if (response.status !== 201) throw new Error(`seeding: POST /v1/pets answered ${response.status}: ${body}`)
      ids.push((JSON.parse(body) as { id: number }).id)
    }
  }
  await Promise.all(Array.from({ length: 10 }, createOne))

  const response = await fetch(`${baseUrl}/v1/pets?limit=20`, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(10_000) })
  await response.arrayBuffer()
  const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')
  if (response.status !== 200 || link?.[1] === undefined) throw new Error(`seeding: GET /v1/pets?limit=20 answered ${response.status} without a next link`)
  const nextPage = new URL(link[1])
  return { ids, nextPagePath: `${nextPage.pathname}${nextPage.search}` }
}
