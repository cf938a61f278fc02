import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'
import { mapInt64Schemas } from '../schemas/int64-schema.js'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type SerializerFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildSerializer']>
type Serializer = (data: unknown) => string

// keywords that only annotate: they change what the document says of an answer, not its bytes
const ANNOTATIONS = new Set(['$ref', 'description', 'examples', 'x-examples', 'headers', 'summary', 'title'])

/** A response schema that is only a `$ref` (and annotations) serializes as its target: the target is its key. */
function sharedTarget (schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  const ref = (schema as { $ref?: unknown }).$ref
  return typeof ref === 'string' && Object.keys(schema).every((keyword) => ANNOTATIONS.has(keyword)) ? ref : undefined
}

/**
 * `schema` without the bounds of its int64 subschemas: they may be bigints, which fast-json-stringify's
 * own schema check refuses, and bounds never change the bytes (it writes a bigint digit for digit).
 */
function withoutInt64Bounds<T> (schema: T): T {
  return mapInt64Schemas(schema, ({ minimum: _minimum, maximum: _maximum, ...int64 }) => int64)
}

/**
 * Fastify's response serializers (fast-json-stringify), with one serializer per shared schema instead
 * of one per answer that refers to it: every operation's error answers are the same `Error`, and
 * compiling each of them again was a tenth of start-up (docs/performance.md).
 */
export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compileAsIs = SerializerSelector()(withoutInt64Bounds(externalSchemas), options)
  const compile = (route: Parameters<typeof compileAsIs>[0]): Serializer => compileAsIs({ ...route, schema: withoutInt64Bounds(route.schema) })
  const byTarget = new Map<string, Serializer>()
  return (route) => {
    const target = sharedTarget(route.schema)
    if (target === undefined) return compile(route)
    let serializer = byTarget.get(target)
    if (serializer === undefined) {
      serializer = compile(route)
      byTarget.set(target, serializer)
    }
    return serializer
  }
}
