/**
 * How the service holds an int64 (`id`, `categoryId`, `petId`): a `number` exactly when the value is
 * a safe integer (within ±(2^53−1), where a double is exact), a `bigint` otherwise. So ordinary ids
 * never pay for bigint arithmetic, and a value is never rounded. The form is canonical: a `bigint`
 * within the safe range never occurs, so `===` compares two Int64 values correctly.
 */
export type Int64 = number | bigint

/** The smallest int64, −2^63. */
export const INT64_MIN = -(2n ** 63n)
/** The largest int64, 2^63 − 1. */
export const INT64_MAX = 2n ** 63n - 1n

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** `value` in the canonical {@link Int64} form: a number when it is safe, else the bigint. */
export function toInt64 (value: bigint): Int64 {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value
}

/**
 * The integer that plain decimal digits (`-?\d+`, as a path or query parameter is written) denote, in
 * the {@link Int64} form; values beyond int64 come back as bigints too, for validation to refuse by
 * their bounds. The caller has checked the text is decimal digits.
 */
export function int64FromDecimal (text: string): Int64 {
  // at most 15 characters: at most 15 digits, always a safe integer, read as a number without a bigint
  return text.length <= 15 ? Number(text) : toInt64(BigInt(text))
}

/** Whether `value` is an int64 in the canonical {@link Int64} form. */
export function isInt64 (value: unknown): value is Int64 {
  return typeof value === 'number' ? Number.isSafeInteger(value) : typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX && (value < MIN_SAFE || value > MAX_SAFE)
}

/** Orders two Int64 values (mixed number and bigint comparisons are exact in JavaScript). */
export function compareInt64 (a: Int64, b: Int64): number {
  return a < b ? -1 : a > b ? 1 : 0
}
