/**
 * A SELECT expression for an INTEGER column that may hold any int64, read exactly: better-sqlite3 reads an INTEGER
 * beyond 2^53 as a rounded number, and reading every integer as a bigint (safeIntegers) would cost every ordinary
 * row. So the value comes back as a number when a double holds it exactly, else as its decimal text (toInt64 of its
 * BigInt makes it an Int64), named `column`.
 */
export function exactInt64Column (column: string): string {
  return `CASE WHEN ${column} BETWEEN ${Number.MIN_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER} THEN ${column} ELSE CAST(${column} AS TEXT) END AS ${column}`
}
