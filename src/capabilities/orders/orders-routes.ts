import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../infra/errors/catalogue.js'
import { commonErrorResponses, errorResponse } from '../../infra/schemas/responses.js'
import { allowOnly } from '../../infra/http/method-not-allowed.js'

const ordersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/store/orders', {
    schema: {
      operationId: 'listStoreOrders',
      tags: ['store'],
      summary: 'List store orders (not implemented)',
      description: 'Referred to by the interface, but its parameters, payloads and responses are not shown, ' +
        'so in v1 it answers 501 `not_implemented` (after authentication, like every operation). ' +
        'Its interactive test panel is disabled.',
      'x-stability': 'experimental',
      'x-hideTryItPanel': true,
      response: {
        400: errorResponse('A query parameter was sent; this operation takes none (`invalid_request`).', undefined,
          { invalid_request: 'query parameter "page" is unknown; this operation takes no query parameters' }),
        501: errorResponse('Store orders are not implemented in v1 (`not_implemented`).'),
        ...commonErrorResponses()
      }
    }
  }, async () => {
    throw new ApiError('not_implemented', 'GET /v1/store/orders is not implemented: the interface does not define store orders yet')
  })

  allowOnly(app, '/store/orders', ['GET'])
}

export default ordersRoutes
