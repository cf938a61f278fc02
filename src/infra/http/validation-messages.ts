import { PATTERN_DESCRIPTION_KEYWORD } from '../schemas/keywords.js'

/** ajv's error for one value, as Fastify attaches it to a validation error (`verbose`: with the failing schema). */
export interface ValidationIssue {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
  /** The schema object whose keyword failed (ajv's `verbose` option). */
  parentSchema?: Record<string, unknown>
  /** The value that failed (ajv's `verbose` option). */
  data?: unknown
  /** The key that failed, for an issue of `propertyNames`. */
  propertyName?: string
}

const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header'
}

/** Turns the first ajv issue into a sentence naming the field and the problem. */
export function describeValidationIssue (part: string, issue: ValidationIssue): string {
  const partName = PART_NAMES[part] ?? part
  const path = issue.instancePath.split('/').slice(1).map(decodePointerToken)
  if (issue.keyword === 'required') {
    const missing = String(issue.params.missingProperty)
    return part === 'body' && path.length === 0
      ? `body: field "${missing}" is required`
      : `${partName} "${[...path, missing].join('.')}" is required`
  }
  if (issue.keyword === 'additionalProperties') {
    const extra = String(issue.params.additionalProperty)
    if (part === 'querystring' && path.length === 0) return `query parameter "${extra}" is unknown; ${describeKnownParameters(issue)}`
    return `${partName === 'body' ? 'body: field' : partName} "${[...path, extra].join('.')}" is not allowed${extra === 'id' ? ' (ids are assigned by the service)' : ''}`
  }
  // a key refused by propertyNames is named as the field it would make: "metadata.<key>"
  if (issue.propertyName !== undefined) {
    if (issue.keyword === 'propertyNames') return `${partName === 'body' ? 'body: field' : partName} "${[...path, issue.propertyName].join('.')}" has an invalid key`
    return `${partName === 'body' ? 'body: field' : partName} "${[...path, issue.propertyName].join('.')}": the key ${describeProblem(issue)}`
  }
  let problem = describeProblem(issue)
  if (path.length === 0) return `${partName} ${problem}`
  // a null field is named as such: in a merge patch, null would mean "remove this field"
  if (issue.keyword === 'type' && issue.data === null) problem += ', not null'
  return part === 'body'
    ? `body: field "${path.join('.')}" ${problem}`
    : `${partName} "${path.join('.')}" ${problem}`
}

function describeProblem (issue: ValidationIssue): string {
  const p = issue.params
  switch (issue.keyword) {
    case 'type': return `must be ${article(String(p.type))}`
    case 'enum': return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    case 'minimum': return `must be ${String(p.comparison)} ${String(p.limit)}`
    case 'maximum': return `must be ${String(p.comparison)} ${String(p.limit)}`
    case 'minLength': return Number(p.limit) === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`
    case 'maxLength': return `must be at most ${String(p.limit)} characters long`
    case 'maxProperties': return `must have at most ${String(p.limit)} keys`
    case 'pattern': {
      const described = issue.parentSchema?.[PATTERN_DESCRIPTION_KEYWORD]
      return typeof described === 'string' ? `must be ${described}` : `must match the pattern ${String(p.pattern)}`
    }
    default: return issue.message ?? 'is invalid'
  }
}

function describeKnownParameters (issue: ValidationIssue): string {
  const known = Object.keys(issue.parentSchema?.properties ?? {})
  return known.length === 0 ? 'this operation takes no query parameters' : `the known ones are ${known.map((name) => `"${name}"`).join(', ')}`
}

function article (type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`
}

function decodePointerToken (token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~')
}
