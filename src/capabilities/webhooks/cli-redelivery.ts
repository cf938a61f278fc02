import type { Config } from '../../infra/config/config.js'
import { DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX, type WebhookCommand } from './cli-commands.js'
import { checkedAsUsage, endpointAndEventIds, endpointId, noSuchEndpoint, optionalString, WebhookUsageError, type Output, type Run, type Values } from './cli-context.js'
import { formatAttempts } from './cli-tables.js'
import { sendTestMessage } from './endpoint-test.js'
import { checkRecoveryWindow } from './redelivery-window.js'

// the `webhooks` commands about deliveries rather than endpoints: test, deliveries, retry, resend, recover

/** Checks the arguments of a delivery command before the database is opened, and returns what runs it. */
export async function prepareRedelivery (command: WebhookCommand, values: Values, positionals: string[], config: Config): Promise<Run> {
  const json = values.json === true
  switch (command) {
    case 'webhooks test': {
      const id = endpointId(command, positionals)
      return async ({ deliveryLog, database, out, err }) => {
        const sent = await sendTestMessage(deliveryLog, id, config.webhooks, new Date())
        if (sent === undefined) return noSuchEndpoint(err, id, database)
        if (json) out(JSON.stringify({ database, ...sent }, null, 2))
        else {
          const sentTo = `a ${sent.type} message (webhook-id ${sent.webhookId}) to webhook endpoint ${id} (${sent.url}) of ${database}`
          const note = sent.disabled ? `\nThe endpoint is disabled: its deliveries resume after \`webhooks enable ${id}\`.` : ''
          if (sent.delivered) out(`Sent ${sentTo}: delivered, answered ${sent.status ?? ''} in ${sent.durationMs} ms.${note}`)
          else err(`petstore: sent ${sentTo}: not delivered: ${sent.error ?? 'failed'} (after ${sent.durationMs} ms).${note}`)
        }
        return sent.delivered ? 0 : 1
      }
    }
    case 'webhooks deliveries': {
      const id = endpointId(command, positionals)
      const query = { ...(values.failed === true ? { result: 'failed' as const } : {}), limit: deliveriesLimit(values.limit) }
      return async ({ deliveryLog, database, out, err }) => {
        const attempts = await deliveryLog.listWebhookAttempts(id, query)
        if (attempts === undefined) return noSuchEndpoint(err, id, database)
        out(json ? JSON.stringify({ database, id, attempts }, null, 2) : formatAttempts(database, id, query, attempts))
        return 0
      }
    }
    case 'webhooks retry': {
      const id = endpointId(command, positionals)
      return async ({ deliveryLog, database, out, err }) => {
        const retried = await deliveryLog.requeueGivenUpWebhookDeliveries(id)
        if (retried === undefined) return noSuchEndpoint(err, id, database)
        const { requeued, expired, disabled } = retried
        if (json) {
          out(JSON.stringify({ database, id, requeued, expired, disabled }, null, 2))
          return 0
        }
        const lines = [requeued === 0
          ? `Webhook endpoint ${id} in ${database} has no given-up delivery to retry.`
          : `Put ${requeued} given-up ${requeued === 1 ? 'delivery' : 'deliveries'} of webhook endpoint ${id} back in line in ${database}; running instances send them now, oldest first.`]
        if (expired > 0) lines.push(`${expired} given-up ${expired === 1 ? 'delivery stays' : 'deliveries stay'} given up: retention has deleted ${expired === 1 ? 'its event' : 'their events'}.`)
        if (disabled) lines.push(`The endpoint is disabled: nothing is sent to it until \`webhooks enable ${id}\`.`)
        out(lines.join('\n'))
        return 0
      }
    }
    case 'webhooks resend': {
      const [id, eventId] = endpointAndEventIds(command, positionals)
      return async ({ deliveryLog, database, out, err }) => {
        const resent = await deliveryLog.resendWebhookEvent(id, eventId)
        switch (resent.outcome) {
          case 'endpoint_not_found': return noSuchEndpoint(err, id, database)
          case 'endpoint_disabled': err(`petstore: webhook endpoint ${id} in ${database} is disabled: \`webhooks enable ${id}\` first`); return 1
          case 'event_not_found': err(`petstore: no event has id ${eventId} in ${database} (never recorded, or deleted by retention)`); return 1
          case 'type_not_received': err(`petstore: event ${eventId} is a ${resent.type}, which webhook endpoint ${id} does not receive (${resent.received.join(', ')})`); return 1
          case 'waiting':
          case 'queued':
            out(json
              ? JSON.stringify({ database, id, eventId, queued: true }, null, 2)
              : resent.outcome === 'waiting'
                ? `Event ${eventId} is waiting for webhook endpoint ${id} in ${database} already; it is sent in its turn.`
                : `Put event ${eventId} back in line for webhook endpoint ${id} in ${database} (its attempt ${resent.attempt}); running instances send it now.`)
            return 0
        }
      }
    }
    case 'webhooks recover': {
      const id = endpointId(command, positionals)
      const since = optionalString(values.since)
      if (since === undefined) throw new WebhookUsageError('webhooks recover needs --since <date-time>')
      const window = await checkedAsUsage(command, () => checkRecoveryWindow(since, optionalString(values.until), new Date(), config.eventRetentionDays))
      return async ({ deliveryLog, database, out, err }) => {
        const recovered = await deliveryLog.recoverWebhookDeliveries(id, window.since, window.until)
        if (recovered.outcome === 'endpoint_not_found') return noSuchEndpoint(err, id, database)
        if (recovered.outcome === 'endpoint_disabled') {
          err(`petstore: webhook endpoint ${id} in ${database} is disabled: \`webhooks enable ${id}\` first`)
          return 1
        }
        const { queued, firstEventId, lastEventId } = recovered
        out(json
          ? JSON.stringify({ database, id, since: window.since.toISOString(), until: window.until.toISOString(), queued, firstEventId, lastEventId }, null, 2)
          : queued === 0
            ? `Webhook endpoint ${id} in ${database} has no failed delivery to recover from ${window.since.toISOString()} to ${window.until.toISOString()}.`
            : `Put ${queued} failed ${queued === 1 ? 'delivery' : 'deliveries'} of webhook endpoint ${id} back in line in ${database} (events ${firstEventId ?? ''} to ${lastEventId ?? ''}); running instances send them now, in event-id order.`)
        return 0
      }
    }
    default:
      throw new Error(`${command} is not a delivery command`)
  }
}

function deliveriesLimit (value: string | boolean | undefined): number {
  if (value === undefined) return DELIVERIES_LIMIT_DEFAULT
  const text = String(value)
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN
  if (!(limit >= 1 && limit <= DELIVERIES_LIMIT_MAX)) {
    throw new WebhookUsageError(`webhooks deliveries: --limit must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}, got "${text}"`)
  }
  return limit
}

/** The output type the commands print with, for the ones that print nothing else. */
export type { Output }
