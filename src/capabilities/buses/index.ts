/** Message buses: the change feed relayed to NATS JetStream and RabbitMQ as CloudEvents; the `buses` CLI command. */
export { buses } from './buses-plugin.js'
