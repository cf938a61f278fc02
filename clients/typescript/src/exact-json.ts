/**
 * JSON that keeps int64 values exact, without a dependency. `JSON.parse` rounds a whole number beyond
 * ±(2^53−1) (a `categoryId` such as 9007199254740993 would become 9007199254740992) and `JSON.stringify`
 * throws on a `bigint`. Here such numbers are parsed as bigints and bigints are written digit for digit,
 * so an int64 is `number | bigint`: a number when it is a safe integer, a bigint otherwise.
 *
 * Parsing stays `JSON.parse`: a text without 16-digit runs or exponents (nearly every answer) is parsed
 * as it is. Otherwise each whole number beyond 2^53 is rewritten into a string carrying a random marker
 * and its digits, and a reviver turns those strings back into bigints; so grammar, errors and duplicate
 * keys are `JSON.parse`'s own. (The service does the same, in its src/json/exact-json.ts.)
 */

/** An int64 as the client hands it out and takes it: a `number` when it is a safe integer, else a `bigint`. */
export type Int64 = number | bigint

// unguessable, so no string an answer carries can pass for a marked number
const MARKER = `int64:${Array.from(globalThis.crypto.getRandomValues(new Uint8Array(12)), (byte) => byte.toString(16).padStart(2, '0')).join('')}:`
const MARKED_STRING = new RegExp(`"${MARKER}(-?\\d+)"`, 'g')
// strings (skipped whole, escapes included) and number literals
const STRINGS_AND_NUMBERS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g
// a whole number beyond 2^53 has 16 digits in a row or an exponent
const MAYBE_UNSAFE = /\d{16}|\d[eE]/
const NUMBER_PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
// whole numbers of more digits, far beyond any int64, are left to JSON.parse (±Infinity)
const MAX_EXACT_DIGITS = 1000

/** The exact value of a number literal that is a whole number beyond ±(2^53−1); else undefined. */
function unsafeWholeValue (literal: string): bigint | undefined {
  // a leading zero before another digit is not JSON: left for JSON.parse to refuse
  if (Math.abs(Number(literal)) <= Number.MAX_SAFE_INTEGER || /^-?0\d/.test(literal)) return undefined
  const [, sign = '', integerDigits = '', fractionDigits = '', exponent = '0'] = NUMBER_PARTS.exec(literal) ?? []
  const digits = integerDigits + fractionDigits
  // zeros counted by a loop: /0+$/ backtracks from every zero of a run not at the end (quadratic)
  let start = 0
  while (start < digits.length && digits.charCodeAt(start) === 0x30) start++
  let end = digits.length
  while (end > start && digits.charCodeAt(end - 1) === 0x30) end--
  const significant = digits.slice(start, end)
  // the value is significant × 10^scale: whole exactly when scale is not negative
  const scale = Number(exponent) - fractionDigits.length + (digits.length - end)
  if (scale < 0 || significant.length + scale > MAX_EXACT_DIGITS) return undefined
  const magnitude = BigInt(significant) * 10n ** BigInt(scale)
  return sign === '-' ? -magnitude : magnitude
}

function reviveMarked (_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.startsWith(MARKER) ? BigInt(value.slice(MARKER.length)) : value
}

/** `JSON.parse(text)`, except that whole numbers beyond ±(2^53−1) are exact bigints. */
export function parseJson (text: string): unknown {
  if (!MAYBE_UNSAFE.test(text)) return JSON.parse(text)
  let marked = false
  const rewritten = text.replace(STRINGS_AND_NUMBERS, (token) => {
    const exact = token.startsWith('"') ? undefined : unsafeWholeValue(token)
    if (exact === undefined) return token
    marked = true
    return `"${MARKER}${exact}"`
  })
  if (!marked) return JSON.parse(text)
  try {
    return JSON.parse(rewritten, reviveMarked)
  } catch (error) {
    // malformed text: the error of the text as it came
    JSON.parse(text)
    throw error
  }
}

function markBigInt (_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? MARKER + value.toString() : value
}

/** `JSON.stringify(value)`, except that a bigint is written as its digits (a JSON number) instead of throwing. */
export function stringifyJson (value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    // a bigint (or a cycle, which throws again below)
    if (!(error instanceof TypeError)) throw error
  }
  return JSON.stringify(value, markBigInt).replace(MARKED_STRING, '$1')
}
