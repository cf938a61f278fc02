import { CommandUsageError } from '../../infra/cli/command-group.js'
import type { Config } from '../../infra/config/config.js'
import type { WebhookDeliveryLog } from './store/webhook-delivery-log.js'
import type { WebhookStore } from './store/webhook-store.js'
import type { WebhookCommand } from './cli-commands.js'
import { WebhookEndpointError, type EndpointField } from './webhook-endpoints.js'

// what the `webhooks` commands share: how they are called, what they run with, how they word a refusal

/** A mistake in how a command was called: the message, printed with its usage, exit code 2. */
export class WebhookUsageError extends CommandUsageError {}

export type Output = (line: string) => void
export type Values = Record<string, string | boolean | undefined>

/** What a command runs with: the stores on the configured database, its description, and the outputs. */
export interface Context {
  webhooks: WebhookStore
  deliveryLog: WebhookDeliveryLog
  database: string
  out: Output
  err: Output
}

/** A command's work, once its arguments are checked: resolves to the exit code. */
export type Run = (context: Context) => Promise<number>

/** Checks a command's arguments before the database is opened (a {@link WebhookUsageError} changes nothing). */
export type Prepare = (command: WebhookCommand, values: Values, positionals: string[], config: Config) => Promise<Run>

// the flag each part of a request is given by
const OPTION_OF: Record<EndpointField, string> = {
  url: 'url',
  events: '--events',
  name: '--name',
  description: '--description',
  rateLimit: '--rate-limit',
  signing: '--signing',
  eventId: 'the event id',
  since: '--since',
  until: '--until'
}

/** A refusal of the endpoint rules as a usage error: `<command>: <flag> <what is wrong>` (the URL's message names the URL itself). */
export function usageErrorOf (command: WebhookCommand, error: unknown): unknown {
  if (!(error instanceof WebhookEndpointError)) return error
  return new WebhookUsageError(error.field === 'url' ? `${command}: ${error.message}` : `${command}: ${OPTION_OF[error.field]} ${error.message}`)
}

/** Runs a check of the command's arguments: a {@link WebhookEndpointError} is a usage error. */
export async function checkedAsUsage<T> (command: WebhookCommand, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check()
  } catch (error) {
    throw usageErrorOf(command, error)
  }
}

export function optionalString (value: string | boolean | undefined): string | undefined {
  return value === undefined ? undefined : String(value)
}

/** A positive integer argument (an endpoint's id, an event's), or undefined. */
function parseId (text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9]\d{0,15}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined
}

/** The command's one argument, an endpoint's id. */
export function endpointId (command: WebhookCommand, positionals: string[]): number {
  const [text, ...extra] = positionals
  const id = parseId(text)
  if (id === undefined || extra.length > 0) throw new WebhookUsageError(`${command} needs the numeric id of an endpoint (see webhooks list)`)
  return id
}

/** The command's two arguments: an endpoint's id, then an event's. */
export function endpointAndEventIds (command: WebhookCommand, positionals: string[]): [number, number] {
  const [endpointText, eventText, ...extra] = positionals
  const [endpoint, event] = [parseId(endpointText), parseId(eventText)]
  if (endpoint === undefined || event === undefined || extra.length > 0) {
    throw new WebhookUsageError(`${command} needs the numeric id of an endpoint (see webhooks list) and of an event (see webhooks deliveries)`)
  }
  return [endpoint, event]
}

export function noSuchEndpoint (err: Output, id: number, database: string): number {
  err(`petstore: no webhook endpoint has id ${id} in ${database}`)
  return 1
}
