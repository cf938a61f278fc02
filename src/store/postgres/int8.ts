import pg from 'pg'

const INT8_OID = 20

/** int8 as a number when exactly representable, else as a bigint: never a silently rounded value. */
export function parseInt8 (text: string): number | bigint {
  const number = Number(text)
  return Number.isSafeInteger(number) ? number : BigInt(text)
}

/** The driver's type parsers with int8 read by {@link parseInt8}. */
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => oid === INT8_OID && format !== 'binary'
    ? parseInt8
    : pg.types.getTypeParser(oid, format as 'text') as (text: string) => unknown) as pg.CustomTypesConfig['getTypeParser']
}
