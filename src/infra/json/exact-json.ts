import { randomBytes } from 'node:crypto'
/**
 * JSON that keeps integers exact. `JSON.parse` rounds a whole number beyond ±(2^53−1) to the nearest
 * double, and `JSON.stringify` throws on a bigint; these parse such numbers as bigints and write bigints
 * digit for digit, so an int64 (int64.ts) survives every trip through JSON text.
 *
 * Parsing stays native: a text whose numbers are all exact in a double is handed to the parser as it is
 * (the fast path, after a cheap look for long digit runs and exponents). Otherwise each whole number
 * beyond 2^53 is rewritten into a string carrying a per-process marker and its exact digits, the text is
 * parsed by the same native parser, and a reviver turns the marked strings into bigints. So the exact
 * path has the fast path's grammar, error messages, duplicate-key rule (the last one wins) and, with
 * secure-json-parse as the parser, its refusal of `__proto__` and `constructor.prototype` — which a
 * second, hand-written or library parser (lossless-json throws on duplicate keys) would each differ in.
 * Node 22's reviver `context.source` is not used: Node 20 lacks it.
 */

/** A JSON parser: `JSON.parse`, or one with the same signature (secure-json-parse). */
export type JsonParse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => unknown

// unguessable, so no string a client sends can pass for a marked number
const MARKER = `int64:${randomBytes(12).toString('hex')}:`
const MARKED_STRING = new RegExp(`"${MARKER}(-?\\d+)"`, 'g')

// strings (skipped whole, escapes included) and number literals
const STRINGS_AND_NUMBERS = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g
// a whole number beyond 2^53 has 16 digits in a row or an exponent; a text with neither takes the fast path
const MAYBE_UNSAFE = /\d{16}|\d[eE]/
// whole numbers of more digits than this, far beyond any int64, are left to the parser (±Infinity):
// making them exact would only cost time (`1e999999999` would take forever)
const MAX_EXACT_DIGITS = 1000
const MAX_SAFE = Number.MAX_SAFE_INTEGER
const NUMBER_PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
const ZERO = 0x30
// a leading zero before another digit (`012`): not a JSON number, so never rewritten, and the parser refuses it
const LEADING_ZERO = /^-?0\d/

/** A number literal as significant digits × 10^scale (and a sign): whole exactly when scale is not negative. */
function literalParts (literal: string): { negative: boolean, significant: string, scale: number } {
  const [, sign = '', integerDigits = '', fractionDigits = '', exponent = '0'] = NUMBER_PARTS.exec(literal) ?? []
  const digits = integerDigits + fractionDigits
  // zeros counted by a loop: /0+$/ backtracks from every zero of a run not at the end (quadratic in a 16 KiB body)
  let start = 0
  while (start < digits.length && digits.charCodeAt(start) === ZERO) start++
  let end = digits.length
  while (end > start && digits.charCodeAt(end - 1) === ZERO) end--
  const significant = digits.slice(start, end)
  return { negative: sign === '-', significant, scale: significant === '' ? 0 : Number(exponent) - fractionDigits.length + (digits.length - end) }
}

/**
 * True when a JSON number literal denotes a whole number: `1`, `1.0`, `1e2` and `1.50e1` do,
 * `1.5` and `1.0000000000000001` do not. Decided on the digits, since JSON.parse rounds.
 */
export function isWholeNumberLiteral (literal: string): boolean {
  return literalParts(literal).scale >= 0
}

/**
 * The exact value of a JSON number literal that denotes a whole number (`12`, `1.0`, `1e2`, `1.50e1`);
 * undefined when it has a fractional part (`1.5`, `1.0000000000000001`) or more than
 * {@link MAX_EXACT_DIGITS} digits.
 */
export function wholeLiteralValue (literal: string): bigint | undefined {
  const { negative, significant, scale } = literalParts(literal)
  if (scale < 0 || significant.length + scale > MAX_EXACT_DIGITS) return undefined
  if (significant === '') return 0n
  const magnitude = BigInt(significant) * 10n ** BigInt(scale)
  return negative ? -magnitude : magnitude
}

/** The exact value of a JSON number literal that is a whole number beyond ±(2^53−1), which JSON.parse would round; else undefined. */
export function unsafeWholeValue (literal: string): bigint | undefined {
  // up to 15 digits, always safe: decided without a conversion
  if (literal.length <= (literal.startsWith('-') ? 16 : 15) && !/[.eE]/.test(literal)) return undefined
  if (LEADING_ZERO.test(literal)) return undefined
  // rounding is monotonic and 2^53 is a double, so a literal whose double is safe is safe too
  if (Math.abs(Number(literal)) <= MAX_SAFE) return undefined
  return wholeLiteralValue(literal)
}

function reviveMarked (_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.startsWith(MARKER) ? BigInt(value.slice(MARKER.length)) : value
}

/**
 * Parses `text` with `parse`, the whole numbers beyond ±(2^53−1) as bigints (see the module's comment);
 * every other number as `parse` reads it. Rewrites only when a number needs it: call it on text already
 * known to hold such a number (the body parser's scan found one), else use {@link parseJson}.
 */
export function parseJsonExactly (text: string, parse: JsonParse = JSON.parse): unknown {
  let marked = false
  const rewritten = text.replace(STRINGS_AND_NUMBERS, (token) => {
    const exact = token.startsWith('"') ? undefined : unsafeWholeValue(token)
    if (exact === undefined) return token
    marked = true
    return `"${MARKER}${exact}"`
  })
  if (!marked) return parse(text)
  try {
    return parse(rewritten, reviveMarked)
  } catch (error) {
    // malformed text: the error, and its positions, of the text as sent
    parse(text)
    throw error
  }
}

/** `parse(text)`, except that whole numbers beyond ±(2^53−1) are exact bigints; the common text takes the native path alone. */
export function parseJson (text: string, parse: JsonParse = JSON.parse): unknown {
  return MAYBE_UNSAFE.test(text) ? parseJsonExactly(text, parse) : parse(text)
}

function markBigInt (_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? MARKER + value.toString() : value
}

/** `JSON.stringify(value)`, except that a bigint is written as its digits (a JSON number) instead of throwing. */
export function stringifyJson (value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, undefined, space)
  } catch (error) {
    // a bigint (or a cycle, which throws again below)
    if (!(error instanceof TypeError)) throw error
  }
  return JSON.stringify(value, markBigInt, space).replace(MARKED_STRING, '$1')
}
