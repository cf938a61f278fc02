import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { acceptMergePatchBodies } from '../../infra/http/content-types.js'
import { answerConditionalChange, MERGE_PATCH_CONSUMES, mergePatchResponses } from '../../infra/http/merge-patch-route.js'
import type { Int64 } from '../../infra/json/int64.js'
import { describeTransitions, FINAL_STATUSES, STATUS_TRANSITIONS } from './status-transitions.js'
import { UpdatePetHeadersSchema } from './pet-headers.js'
import { PET_STATUSES, PetPatchSchema, PetSchema, type Pet, type PetStatus } from './pet-schemas.js'
import { PetIdParamsSchema } from './list-query.js'
import { errorResponse } from '../../infra/schemas/responses.js'

/** The 404 of a pet id no pet has. */
export function petNotFoundMessage (petId: Int64): string {
  return `No pet has id ${petId}.`
}

function preconditionFailedMessage (petId: Int64): string {
  return `If-Match does not match the current ETag of pet ${petId}: it has changed since that tag was read. Read it again and retry.`
}

function petHasOpenOrderMessage (petId: Int64, status: PetStatus, orderId: number): string {
  return `Pet ${petId} is "${status}" with open order ${orderId}, which decides its status: approve, deliver or cancel that order (PATCH /v1/store/orders/${orderId}) instead. Nothing changed.`
}

function invalidTransitionMessage (petId: Int64, from: PetStatus, to: PetStatus): string {
  const next = STATUS_TRANSITIONS[from]
  const why = next.length === 0 ? `"${from}" is final` : `from "${from}" it can only become ${next.map((status) => `"${status}"`).join(' or ')}`
  return `Pet ${petId} is "${from}" and cannot become "${to}": ${why}.`
}

// the pet id the document's examples name
const EXAMPLE_PET_ID = 1
// the order of the examples of the orders capability (which depends on this one, so it is not imported)
const EXAMPLE_OPEN_ORDER_ID = 7
const [FINAL_STATUS = 'sold'] = FINAL_STATUSES

/**
 * `PATCH /pets/{petId}` (updatePet, beta): a JSON Merge Patch of a pet, with the status lifecycle and
 * `If-Match`. In a context of its own, because it alone also takes `application/merge-patch+json`.
 */
const updatePet: FastifyPluginAsyncTypebox = async (app) => {
  acceptMergePatchBodies(app)

  app.patch('/pets/:petId', {
    schema: {
      operationId: 'updatePet',
      tags: ['pets'],
      summary: 'Change an animal (beta)',
      description: 'Changes the fields the body names — a JSON Merge Patch (RFC 7396) sent as `application/merge-patch+json` ' +
        'or `application/json` — and answers the whole pet as it now is, with its `ETag`. ' +
        `Status transitions: ${describeTransitions()}; \`${FINAL_STATUS}\` is final. Setting the status a pet already has changes nothing; ` +
        '`name` and `categoryId` may be corrected in any status. `{}` changes nothing and answers the pet and its current `ETag`. ' +
        'With `If-Match`, the change is made only if the pet still has that tag (else 412): of concurrent changes sent with the same tag, ' +
        'exactly one succeeds, so none is lost. The change is durable before 200 is sent. ' +
        'Safe to retry without an `Idempotency-Key`: the body states the wanted values, so a repeat changes nothing more (a repeated ' +
        `\`${FINAL_STATUS}\` is a no-op) — but a repeat with \`If-Match\` of a change that was made gets 412, because the tag has changed since.`,
      'x-stability': 'beta',
      consumes: MERGE_PATCH_CONSUMES,
      params: PetIdParamsSchema,
      headers: UpdatePetHeadersSchema,
      body: Type.Ref(PetPatchSchema),
      response: mergePatchResponses({
        resource: Type.Ref(PetSchema),
        changed: 'The pet as it now is.',
        badRequest: errorResponse('`petId` is not a positive integer, the body is not a valid patch (a field of the wrong type or out of range, `null`, `id` or an unknown field), ' +
          'or `If-Match` is malformed (`invalid_request`); or the body is not JSON (`malformed_json`).', undefined,
        { invalid_request: `body: field "status" must be one of ${PET_STATUSES.map((status) => JSON.stringify(status)).join(', ')}` }),
        notFound: errorResponse('No pet has this id (`pet_not_found`).', undefined, { pet_not_found: petNotFoundMessage(EXAMPLE_PET_ID) }),
        conflict: errorResponse(`The status cannot move from the pet's current one to the one asked for (\`invalid_transition\`): only ${describeTransitions()} are allowed; ` +
          'or the patch changes the status of a pet with an open order, whose status the order decides (`pet_has_open_order`; a patch leaving the status alone is made). Nothing changed.',
        undefined, { invalid_transition: invalidTransitionMessage(EXAMPLE_PET_ID, FINAL_STATUS, 'available'), pet_has_open_order: petHasOpenOrderMessage(EXAMPLE_PET_ID, 'pending', EXAMPLE_OPEN_ORDER_ID) }),
        preconditionFailed: errorResponse('`If-Match` does not match the pet\'s current `ETag` (`precondition_failed`): it changed since. Nothing changed.',
          undefined, { precondition_failed: preconditionFailedMessage(EXAMPLE_PET_ID) })
      })
    }
  }, async (request, reply) => {
    const { petId } = request.params
    return await answerConditionalChange(reply, {
      ifMatch: request.headers['if-match'],
      schemaName: 'Pet',
      change: async (precondition) => await app.petStore.updatePet(petId, request.body, precondition),
      changed: (result): Pet => {
        switch (result.outcome) {
          case 'not_found': throw new ApiError('pet_not_found', petNotFoundMessage(petId))
          case 'precondition_failed': throw new ApiError('precondition_failed', preconditionFailedMessage(petId))
          case 'invalid_transition': throw new ApiError('invalid_transition', invalidTransitionMessage(petId, result.from, result.to))
          case 'pet_has_open_order': throw new ApiError('pet_has_open_order', petHasOpenOrderMessage(petId, result.status, result.orderId))
        }
        const { pet, previous } = result
        if (pet.status !== previous.status) app.petMetrics.transitions.inc({ from: previous.status, to: pet.status })
        return pet
      }
    })
  })
}

export default updatePet
