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
  // made by the context's first answer, not at start: Fastify asks for a factory per encapsulated context (eleven
  // at start), and each mapped every shared schema (withoutInt64Bounds) for compilers most contexts never use then
  let compiler: ReturnType<typeof serializerCompiler> | undefined
  const compile: ReturnType<typeof serializerCompiler> = (route) => (compiler ??= serializerCompiler(externalSchemas, options))(route)
  const byTarget = new Map<string, Serializer>()
  return (route) => {
    const target = sharedTarget(route.schema)
    if (target === undefined) return compiledOnFirstUse(() => compile(route))
    let serializer = byTarget.get(target)
    if (serializer === undefined) {
      serializer = compiledOnFirstUse(() => compile(route))
      byTarget.set(target, serializer)
    }
    return serializer
  }
}

type CompileSerializer = ReturnType<ReturnType<typeof SerializerSelector>>

/** What compiles one route answer's serializer, as the service compiles it, at once (test/http/schemas.test.ts compiles them all). */
export function serializerCompiler (externalSchemas: Parameters<SerializerFactory>[0], options: Parameters<SerializerFactory>[1]): (route: Parameters<CompileSerializer>[0]) => Serializer {
  const compileAsIs = SerializerSelector()(withoutInt64Bounds(externalSchemas), options)
  return (route) => compileAsIs({ ...route, schema: withoutInt64Bounds(route.schema) })
}

/**
 * A serializer compiled on its first answer instead of at start: start-up compiled one for every
 * answer of every route, and most are written never or much later (docs/performance.md#start-up).
 */
function compiledOnFirstUse (compile: () => Serializer): Serializer {
  let compiled: Serializer | undefined
  return (data) => (compiled ??= compile())(data)
}
