import { endpoint, expectShape, isObject } from './answers.js'
import { findLink } from './link-header.js'
import type { ClientSettings, RequestOptions } from './options.js'
import { send, type ApiAnswer } from './transport.js'
import type { Category, CategoryPage, Int64, ListCategoriesQuery, TaggedCategory } from './types.js'

/**
 * The categories (beta): the `categoryId`s pets carry and the names given to them, each with its pets by status.
 * Every call is retried like any other; `put` states the wanted name, so a repeat changes nothing more.
 */
export interface CategoryOperations {
  /** One page of categories in `id` order (`limit` 1–100, default 20). */
  list (query?: ListCategoriesQuery, options?: RequestOptions): Promise<CategoryPage>
  /** Every category, page after page. */
  all (options?: RequestOptions): AsyncGenerator<Category, void, undefined>
  /** One category with its `etag` (404 `category_not_found` when it has no name and no pet carries it). */
  get (categoryId: Int64, options?: RequestOptions): Promise<TaggedCategory>
  /**
   * Gives the category `name` (write keys; 409 `category_name_taken` when another category has it) and answers the
   * category with its pets and `etag`; `created` is true when it had no name before (a retried put whose first attempt went through answers false).
   */
  put (categoryId: Int64, name: string, options?: RequestOptions): Promise<TaggedCategory & { created: boolean }>
}

/** The category operations over `settings`' transport. */
export function categoryOperations (settings: ClientSettings): CategoryOperations {
  const categoryUrl = (id: Int64): URL => endpoint(settings, `/categories/${encodeURIComponent(String(id))}`)
  const tagged = (answer: ApiAnswer, operation: 'getCategory' | 'putCategory'): TaggedCategory => {
    const etag = answer.response.headers.get('etag')
    return expectShape(isObject(answer.body) && etag !== null, { category: answer.body as Category, etag: etag as string }, operation, answer)
  }

  const list = async (query: ListCategoriesQuery = {}, { signal }: RequestOptions = {}): Promise<CategoryPage> => {
    const url = endpoint(settings, '/categories')
    for (const name of ['limit', 'cursor'] as const) if (query[name] !== undefined) url.searchParams.set(name, String(query[name]))
    const answer = await send(settings, { operation: 'listCategories', method: 'GET', url, signal })
    const categories = expectShape(Array.isArray(answer.body), answer.body as Category[], 'listCategories', answer)
    const next = findLink(answer.response.headers.get('link'), 'next', answer.response.url || url.href)
    if (next === undefined) return { categories }
    // like listPets: only the link's cursor is kept, and the next page is asked for at baseUrl
    const nextCursor = next.searchParams.get('cursor')
    return { categories, nextCursor: expectShape(nextCursor !== null && nextCursor !== '', nextCursor as string, 'listCategories', answer) }
  }

  return {
    list,

    async * all (options = {}) {
      let cursor: string | undefined
      do {
        const page: CategoryPage = await list(cursor === undefined ? {} : { cursor }, options)
        yield * page.categories
        cursor = page.nextCursor
      } while (cursor !== undefined)
    },

    async get (categoryId, { signal } = {}) {
      return tagged(await send(settings, { operation: 'getCategory', method: 'GET', url: categoryUrl(categoryId), signal }), 'getCategory')
    },

    async put (categoryId, name, { signal } = {}) {
      const answer = await send(settings, { operation: 'putCategory', method: 'PUT', url: categoryUrl(categoryId), body: { name }, signal })
      return { ...tagged(answer, 'putCategory'), created: answer.response.status === 201 }
    }
  }
}
