import type { TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { commonErrorResponses, errorResponse, ETAG_HEADER } from '../schemas/responses.js'
import { BODY_TOO_LARGE_MESSAGE, MERGE_PATCH_MEDIA_TYPES, MERGE_PATCH_ONLY_MESSAGE } from './content-types.js'
import { BYTES_TAGGING, ifMatchPrecondition, sendTagged, serializeAnswer, type EntityTagging } from './tagged-answers.js'

/**
 * The skeleton of a conditional change (updatePet, updateOrder), written once: a JSON Merge Patch
 * (RFC 7396) answered with the whole resource and its `ETag`, made only if `If-Match` still holds.
 * The route's context also calls acceptMergePatchBodies (content-types.ts).
 */

/** The media types a merge-patch route consumes, for its schema. */
export const MERGE_PATCH_CONSUMES = [...MERGE_PATCH_MEDIA_TYPES]

type ErrorAnswer = ReturnType<typeof errorResponse>

/** What differs between merge-patch routes' answers: the resource's schema and each refusal's prose. */
export interface MergePatchAnswers<R extends TSchema> {
  /** The resource's schema (a reference), answered with 200. */
  resource: R
  /** The 200's description: the resource as it now is. */
  changed: string
  badRequest: ErrorAnswer
  notFound: ErrorAnswer
  conflict: ErrorAnswer
  preconditionFailed: ErrorAnswer
}

/** The responses of a merge-patch route, in the order the document lists them. */
export function mergePatchResponses<R extends TSchema> (answers: MergePatchAnswers<R>) {
  return {
    200: { ...answers.resource, description: answers.changed, headers: { ETag: ETAG_HEADER } },
    400: answers.badRequest,
    404: answers.notFound,
    409: answers.conflict,
    412: answers.preconditionFailed,
    413: errorResponse('The body is larger than the limit (`payload_too_large`).', undefined, { payload_too_large: BODY_TOO_LARGE_MESSAGE }),
    415: errorResponse(`The body is not ${MERGE_PATCH_MEDIA_TYPES.map((type) => `\`${type}\``).join(' or ')} (\`unsupported_media_type\`).`,
      undefined, { unsupported_media_type: MERGE_PATCH_ONLY_MESSAGE }),
    ...commonErrorResponses()
  }
}

export interface ConditionalChange<T, O> {
  /** The request's `If-Match` header, if any. */
  ifMatch: string | undefined
  /** The name of the resource's schema (for the error of a serializer that writes no text). */
  schemaName: string
  /** Makes the change in the store, with the If-Match check to make on the resource inside its transaction. */
  change: (precondition: ((current: T) => boolean) | undefined) => Promise<O>
  /** The changed resource of the store's outcome; throws the ApiError of an outcome that changed nothing. */
  changed: (outcome: O) => T
  /** How the resource is tagged, by default the strong tag of its bytes. */
  tagging?: EntityTagging
}

/** Runs a conditional change and answers the resource as it now is, with its tag (the one a conditional GET gives it). */
export async function answerConditionalChange<T, O> (reply: FastifyReply, { ifMatch, schemaName, change, changed, tagging = BYTES_TAGGING }: ConditionalChange<T, O>): Promise<FastifyReply> {
  // the tag of the resource as it is inside the store's transaction, made exactly as the answer's
  const precondition = ifMatchPrecondition(ifMatch, (current: T) => serializeAnswer(reply, current, schemaName), tagging)
  const resource = changed(await change(precondition))
  return sendTagged(reply, serializeAnswer(reply, resource, schemaName), tagging)
}
