import { randomBytes } from 'node:crypto'
import { Type, type TProperties } from '@sinclair/typebox'
import { SignedPayloads } from '../credentials/signed-payload.js'
import { ApiError } from '../errors/catalogue.js'
import { INT64_MAX, INT64_MIN, toInt64, type Int64 } from '../json/int64.js'
import { errorResponse, type HeaderSpec } from '../schemas/responses.js'

/** Default number of items on a page of every list. */
export const PAGE_LIMIT_DEFAULT = 20
/** Most items on a page of every list. */
export const PAGE_LIMIT_MAX = 100

/** Where a list keeps its cursor secret: the store's settings (`app.database`), so every instance shares it. */
export interface SettingStore {
  /** The setting's value, stored as `value` when it had none (atomically: instances starting together agree). */
  ensureSetting (name: string, value: string): Promise<string>
}

/** What a keyset list is: every list of the API (pets, orders, …) is one, paged by the same rules. */
export interface PagedListSpec<F extends string> {
  /** The list's path below the base address, as its `next` links carry it: `/pets`, `/store/orders`. */
  path: string
  /** The cursor secret's name in the store's settings: one per list, so a list's cursor is refused by another. */
  secretSetting: string
  /** The first field of a cursor's payload (`v1`): a new layout takes a new tag, and the old cursors are refused. */
  tag: string
  /**
   * The query parameters a cursor is bound to, in the order `next` links carry them, each with the pattern of its
   * values (a regular expression source, without `.`; the empty string stands for "not given" and must match).
   */
  filters: Readonly<Record<F, string>>
}

/** A request's values of a list's filters, as their query parameters write them; undefined: not given. */
export type FilterValues<F extends string> = Readonly<Partial<Record<F, string>>>

const NOT_ISSUED = 'query parameter "cursor" is not a cursor this service issued'

// the sort key: an id, or any position a store pages by in integer order (an int64: a category's id may be negative)
const SORT_KEY_PATTERN = '-?\\d{1,19}'

/**
 * A keyset-paged list (`GET /pets`, `GET /store/orders`, …): its signed cursors, the 400 of a bad one and the
 * `Link: <…>; rel="next"` of each page, written once for every list. A cursor holds the page's sort key (the
 * last id served) and the filters it was issued for, signed under the list's secret in the store: tamper-evident,
 * accepted by every instance, refused under other filters. Made once per app ({@link PagedList.open}); the
 * request path builds strings only.
 */
export class PagedList<F extends string> {
  readonly #spec: PagedListSpec<F>
  readonly #signed: SignedPayloads
  readonly #names: readonly F[]
  readonly #payload: RegExp
  readonly #otherFilters: string

  /** The list of `spec`, its secret read from (or created in) `settings`. */
  static async open<F extends string> (settings: SettingStore, spec: PagedListSpec<F>): Promise<PagedList<F>> {
    return new PagedList(spec, await settings.ensureSetting(spec.secretSetting, randomBytes(32).toString('base64url')))
  }

  /** The list of `spec` under `secret` (base64url, at least 32 bytes). */
  constructor (spec: PagedListSpec<F>, secret: string) {
    this.#spec = spec
    this.#signed = new SignedPayloads(secret)
    this.#names = Object.keys(spec.filters) as F[]
    const filters = this.#names.map((name) => `\\.(${spec.filters[name]})`).join('')
    this.#payload = new RegExp(`^${escapeRegExp(spec.tag)}\\.(${SORT_KEY_PATTERN})${filters}$`)
    const quoted = this.#names.map((name) => `"${name}"`)
    this.#otherFilters = this.#names.length === 1
      ? `another ${this.#names[0] ?? ''} filter; keep ${quoted[0] ?? ''}`
      : `other filters; keep ${prose(quoted, 'and')}`
  }

  /**
   * Where the page asked for starts: after the sort key `cursor` holds, or undefined without one. A cursor this
   * list did not issue, or issued for other `filters`, is a 400 `invalid_cursor` naming the query parameter.
   */
  after (cursor: string | undefined, filters: FilterValues<F>): number | undefined {
    const key = this.#sortKey(cursor, filters)
    if (key === undefined) return undefined
    const after = Number(key)
    if (!Number.isSafeInteger(after)) throw new ApiError('invalid_cursor', NOT_ISSUED)
    return after
  }

  /** {@link PagedList.after}, for a list whose sort key is any int64 (a category's id), exactly. */
  afterInt64 (cursor: string | undefined, filters: FilterValues<F>): Int64 | undefined {
    const key = this.#sortKey(cursor, filters)
    if (key === undefined) return undefined
    const after = BigInt(key)
    if (after < INT64_MIN || after > INT64_MAX) throw new ApiError('invalid_cursor', NOT_ISSUED)
    return toInt64(after)
  }

  #sortKey (cursor: string | undefined, filters: FilterValues<F>): string | undefined {
    if (cursor === undefined) return undefined
    const payload = this.#signed.verify(cursor)
    const match = payload === undefined ? null : this.#payload.exec(payload)
    if (match === null) throw new ApiError('invalid_cursor', NOT_ISSUED)
    if (this.#names.some((name, index) => match[index + 2] !== (filters[name] ?? ''))) {
      throw new ApiError('invalid_cursor', `query parameter "cursor" belongs to a list with ${this.#otherFilters} as in the link that carried it`)
    }
    return match[1]
  }

  /** The cursor of the page after the sort key `last`, under `filters`. */
  cursor (last: Int64, filters: FilterValues<F>): string {
    return this.#signed.sign(`${this.#spec.tag}.${last}${this.#names.map((name) => `.${filters[name] ?? ''}`).join('')}`)
  }

  /** The `Link` header of the page after the sort key `last`: `limit`, the filters given, then the cursor. */
  nextLink (baseUrl: string, limit: number, filters: FilterValues<F>, last: Int64): string {
    const next = new URLSearchParams({ limit: String(limit) })
    for (const name of this.#names) {
      const value = filters[name]
      if (value !== undefined) next.set(name, value)
    }
    next.set('cursor', this.cursor(last, filters))
    return `<${baseUrl}${this.#spec.path}?${next.toString()}>; rel="next"`
  }
}

/**
 * The query of a list: `limit`, the list's own `filters` (their schemas, in the order of its
 * {@link PagedListSpec.filters}), then `cursor`; `noun` names what a page holds (`animals`).
 */
export function pagedListQuerySchema<P extends TProperties> (noun: string, filters: P) {
  const names = Object.keys(filters).map((name) => `\`${name}\``)
  return Type.Object({
    // optional for OpenAPI; validation fills in the default, so handlers always see a number
    limit: Type.Optional(Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: PAGE_LIMIT_MAX,
      default: PAGE_LIMIT_DEFAULT,
      description: `Maximum number of ${noun} returned: an integer from 1 to ${PAGE_LIMIT_MAX}, default ${PAGE_LIMIT_DEFAULT}, ` +
        'written in plain decimal digits (a query parameter is text: `2.0`, `1e1` or `+2` are rejected).',
      examples: [PAGE_LIMIT_DEFAULT]
    })),
    ...filters,
    cursor: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'Opaque position from the `next` link of a previous page. ' +
        (names.length === 0 ? 'A' : `Bound to the ${prose(names, 'and')} filter${names.length === 1 ? '' : 's'} it was issued for; a`) +
        ' cursor that was altered or belongs to another query is rejected with 400 `invalid_cursor`.',
      examples: ['eyJhIjoyMH0.c2lnbmF0dXJl']
    }))
  }, { additionalProperties: false })
}

/** The `Link` header of a page of the list at `path` (`/pets`), whose items `noun` names (`pets`). */
export function nextLinkHeader (path: string, noun: string): HeaderSpec {
  return {
    type: 'string',
    description: `RFC 8288 link to the next page, present only when more ${noun} match: \`<…/v1${path}?limit=…&cursor=…>; rel="next"\`.`,
    pattern: `^<[^>]+${escapeRegExp(path)}\\?[^>]+>; rel="next"$`,
    maxLength: 2000,
    example: `<https://api.petstore.test/v1${path}?limit=${PAGE_LIMIT_DEFAULT}&cursor=eyJhIjoyMH0.c2lnbmF0dXJl>; rel="next"`
  }
}

/** The 400 of a list whose query has `filters` besides `limit` and `cursor`. */
export function pagedListBadRequest (filters: readonly string[]) {
  const parameters = ['limit', ...filters, 'cursor'].map((name) => `\`${name}\``)
  return errorResponse(`${prose(parameters, 'or')} is invalid, or a query parameter is unknown (\`invalid_request\`, \`invalid_cursor\`).`, undefined, {
    invalid_request: `query parameter "limit" must be <= ${PAGE_LIMIT_MAX}`,
    invalid_cursor: 'query parameter "cursor" is not a cursor this service issued'
  })
}

/** `a`, `a and b`, `a, b and c`. */
function prose (items: readonly string[], conjunction: string): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1) ?? ''}`
}

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
