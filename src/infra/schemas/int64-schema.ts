import { Type, type TUnsafe } from '@sinclair/typebox'
import { INT64_MAX, INT64_MIN, type Int64 } from '../json/int64.js'

/** The format every int64 schema has, and by which the compilers find them. */
export const INT64_FORMAT = 'int64'

export interface Int64SchemaOptions {
  minimum?: bigint | number
  maximum?: bigint | number
  description: string
  examples?: number[]
}

/**
 * An OpenAPI `integer`/`int64` whose values are {@link Int64} (number or bigint). Its bounds may be
 * bigints (2^63 − 1 is no double), so the schema object is not JSON as it stands: validation rewrites
 * it into its own keyword (http/validation.ts), serialization drops the bounds (http/serialization.ts),
 * and the document is written with bigints as digits (routes/openapi-document.ts).
 */
export function int64Schema ({ minimum = INT64_MIN, maximum = INT64_MAX, ...options }: Int64SchemaOptions): TUnsafe<Int64> {
  return Type.Unsafe<Int64>({ type: 'integer', format: INT64_FORMAT, minimum, maximum, ...options })
}

type SchemaNode = Record<string, unknown>

/**
 * A copy of `schema` in which every int64 subschema is replaced by `replace(subschema)`; the rest is
 * copied as it is (shared schemas are constants, never changed in place). `schema` itself is
 * returned when it holds no int64 subschema.
 */
export function mapInt64Schemas<T> (schema: T, replace: (int64: SchemaNode) => SchemaNode): T {
  const map = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      const items = value.map(map)
      return items.some((item, index) => item !== value[index]) ? items : value
    }
    if (typeof value !== 'object' || value === null) return value
    const node = value as SchemaNode
    if (node.format === INT64_FORMAT) return replace(node)
    let copy: SchemaNode | undefined
    for (const [key, inner] of Object.entries(node)) {
      const mapped = map(inner)
      if (mapped !== inner) (copy ??= { ...node })[key] = mapped
    }
    return copy ?? node
  }
  return map(schema) as T
}
