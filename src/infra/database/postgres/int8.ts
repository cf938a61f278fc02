import pg from 'pg'
import { parseJson } from '../../json/exact-json.js'

const INT8_OID = 20
const JSON_OIDS = new Set([114, 3802])

/** int8 as a number when exactly representable, else as a bigint: never a silently rounded value. */
export function parseInt8 (text: string): number | bigint {
  const number = Number(text)
  return Number.isSafeInteger(number) ? number : BigInt(text)
}

const parseExactJson = (text: string): unknown => parseJson(text)

/**
 * The driver's type parsers with int8 read by {@link parseInt8}, and json and jsonb (an event's data) with
 * their int64 values exact: the driver's own JSON.parse would round those beyond 2^53.
 */
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => format === 'binary'
    ? pg.types.getTypeParser(oid, 'binary') as (value: Buffer) => unknown
    : oid === INT8_OID ? parseInt8 : JSON_OIDS.has(oid) ? parseExactJson : pg.types.getTypeParser(oid, 'text') as (text: string) => unknown) as pg.CustomTypesConfig['getTypeParser']
}
