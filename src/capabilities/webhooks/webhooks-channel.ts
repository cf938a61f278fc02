import { eventMessages, receiveOperation, type AsyncApiChannel } from '../events/index.js'
import { describeDelivery, headerParameters as webhookHeaderParameters } from './webhooks-document.js'

/** The signed POSTs to the endpoints an operator registered (`npx petstore webhooks add`), as the OpenAPI document's `webhooks` describe them. */
export const WEBHOOKS_CHANNEL: AsyncApiChannel = {
  id: 'webhooks',
  servers: () => ({
    webhookEndpoint: {
      host: '{host}',
      pathname: '{path}',
      protocol: 'https',
      description: 'An endpoint an operator registered (`npx petstore webhooks add <url>`): the consumer\'s own HTTPS server, not this service.',
      variables: {
        host: { description: 'The host (and port) of the registered URL.', examples: ['shop.example.com'] },
        path: { description: 'The path of the registered URL.', examples: ['/hooks'] }
      }
    }
  }),
  channel: ({ config, eventTypes }) => {
    const parameters = webhookHeaderParameters()
    return {
      address: null,
      title: 'Webhooks: signed POSTs to registered endpoints',
      summary: 'Each event of the types an endpoint was registered for, POSTed to it and signed (Standard Webhooks).',
      description: `Each event is POSTed to the URL the operator registered for its type, signed as Standard Webhooks specifies. ${describeDelivery(config.webhooks)}`,
      servers: [{ $ref: '#/servers/webhookEndpoint' }],
      messages: eventMessages(eventTypes, {
        headers: () => ({
          type: 'object',
          description: 'The HTTP request headers of every webhook (Standard Webhooks).',
          required: parameters.map(({ name }) => name),
          properties: Object.fromEntries(parameters.map(({ name, description, schema, example }) => [name, { ...schema, description, examples: [example] }]))
        }),
        exampleHeaders: ({ example }) => ({ ...Object.fromEntries(parameters.map(({ name, example }) => [name, example])), 'webhook-id': String(example.id) }),
        travels: 'As a webhook it is the body of one POST; any 2xx answer is a delivery.'
      }),
      'x-stability': 'beta'
    }
  },
  operations: ({ eventTypes }) => ({
    receiveWebhooks: receiveOperation('webhooks', eventTypes, {
      title: 'Receive webhooks',
      summary: 'Receive the events of the types the endpoint was registered for, at least once each; deduplicate by `webhook-id`, order by the event id.',
      bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } }
    })
  })
}
