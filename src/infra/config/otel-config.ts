import { ConfigError } from './config-error.js'

// The OpenTelemetry variables config.ts reads (its CONFIG_VARIABLES lists them), parsed and checked here:
// the SDK reads its other OTEL_* itself (the resource, the exporter's headers and timeout, the batches).

/** The only OTLP protocol the service exports with. */
export const OTLP_PROTOCOL = 'http/json'

/** The samplers of `OTEL_TRACES_SAMPLER` the service takes: the SDK's own, without the remote (Jaeger) ones. */
export const TRACE_SAMPLERS = [
  'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'
] as const

/** Which traces are recorded, from `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`. */
export interface TraceSampler {
  /** The sampler as named (`parentbased_always_on` when unset, as the specification says). */
  readonly name: typeof TRACE_SAMPLERS[number]
  /**
   * Whether a caller's `traceparent` decides: a request whose caller sampled it is traced, one whose
   * caller did not is not; only a request without one is decided by `ratio`.
   */
  readonly parentBased: boolean
  /** The share of traces (0 to 1) started here that are recorded: 1 for `always_on`, 0 for `always_off`. */
  readonly ratio: number
}

/** OpenTelemetry trace export, from the SDK's standard `OTEL_*` variables. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  readonly tracesUrl: string
  readonly sampler: TraceSampler
}

type OtelVariable = 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_EXPORTER_OTLP_PROTOCOL' |
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' | 'OTEL_SDK_DISABLED' | 'OTEL_TRACES_SAMPLER' | 'OTEL_TRACES_SAMPLER_ARG'
type Env = Readonly<Partial<Record<OtelVariable, string | undefined>>>

function isUnset (value: string | undefined): value is undefined {
  return value === undefined || value.trim() === ''
}

/**
 * The trace export settings, or undefined when tracing is off (no endpoint, or `OTEL_SDK_DISABLED=true`).
 * Every variable is checked whether tracing is on or not, so a typo shows before the day it is turned on.
 */
export function parseTracing (env: Env): TracingSettings | undefined {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase()
  if (disabled !== undefined && disabled !== '' && disabled !== 'true' && disabled !== 'false') {
    throw new ConfigError('OTEL_SDK_DISABLED', `must be true or false, got "${env.OTEL_SDK_DISABLED}"`)
  }
  const tracesUrl = parseOtlpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ??
    parseOtlpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT)?.replace(/\/?$/, '/v1/traces')
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const) {
    const protocol = env[variable]
    if (!isUnset(protocol) && protocol.trim() !== OTLP_PROTOCOL) {
      throw new ConfigError(variable, `must be ${OTLP_PROTOCOL} (the service exports OTLP over HTTP with JSON bodies) or unset, got "${protocol}"`)
    }
  }
  const sampler = parseSampler(env.OTEL_TRACES_SAMPLER, env.OTEL_TRACES_SAMPLER_ARG)
  if (tracesUrl === undefined || disabled === 'true') return undefined
  return Object.freeze({ tracesUrl, sampler })
}

function parseSampler (value: string | undefined, argument: string | undefined): TraceSampler {
  const name = isUnset(value) ? 'parentbased_always_on' : value.trim().toLowerCase()
  if (!(TRACE_SAMPLERS as readonly string[]).includes(name)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER', `must be one of ${TRACE_SAMPLERS.join(', ')}, got "${value}"`)
  }
  const sampler = name as TraceSampler['name']
  const byRatio = sampler.endsWith('traceidratio')
  if (!isUnset(argument) && !byRatio) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `is read only with traceidratio or parentbased_traceidratio (a ratio from 0 to 1); OTEL_TRACES_SAMPLER is ${sampler}, got "${argument}"`)
  }
  return Object.freeze({ name: sampler, parentBased: sampler.startsWith('parentbased_'), ratio: byRatio ? parseRatio(argument) : sampler.endsWith('always_off') ? 0 : 1 })
}

/** `OTEL_TRACES_SAMPLER_ARG` of a ratio sampler: a decimal from 0 to 1, 1 when unset (as the specification says). */
function parseRatio (argument: string | undefined): number {
  if (isUnset(argument)) return 1
  const ratio = /^(0|1)?(\.\d+)?$/.test(argument.trim()) && argument.trim() !== '.' ? Number(argument.trim()) : NaN
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a ratio from 0 to 1 such as 0.1, got "${argument}"`)
  return ratio
}

function parseOtlpUrl (variable: string, value: string | undefined): string | undefined {
  if (isUnset(value)) return undefined
  const url = value.trim()
  // the value is not echoed: collectors take credentials in the URL too
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new ConfigError(variable, 'must be an http(s) URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318')
  }
  return url
}
