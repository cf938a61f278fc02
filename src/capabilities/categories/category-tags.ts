import { twoPartTagging, type TagParts } from '../../infra/http/tagged-answers.js'
import type { HeaderSpec } from '../../infra/schemas/responses.js'

// the serializer writes `pets` last, and a string in JSON never holds an unescaped quote: the last `,"pets":` starts the counts
const PETS_MEMBER = ',"pets":'

/** A category's two parts, from its answer's bytes: its record (id and name), then its pets' counts. */
function partsOf (body: string): TagParts {
  const split = body.lastIndexOf(PETS_MEMBER)
  return split < 0 ? [body, ''] : [body.slice(0, split), body.slice(split)]
}

/**
 * A category's tags: strong, in two parts, its record's and its pets' counts', so a conditional GET sees a rename and
 * every change of its pets (a 304 only while neither moved).
 */
export const CATEGORY_TAGGING = twoPartTagging(partsOf)

/** A category's `ETag` header, as the document states it. */
export const CATEGORY_ETAG_HEADER: HeaderSpec = {
  type: 'string',
  description: 'Strong entity tag of the category, in two parts: its record\'s (id and name) and its pets\' counts\'. It changes whenever either does, ' +
    'so `If-None-Match` answers 304 only while neither changed.',
  pattern: '^"[A-Za-z0-9_-]{54}"$',
  maxLength: 56,
  example: '"OwlCk7E2ckJkk5U3nrFfO958dmF9tEg99Lp8LxZJUIHQuIbqNTEf5d"'
}
