import type { WebhookAttemptQuery, WebhookAttemptRecord } from './store/webhook-delivery-log.js'
import type { WebhookEndpointRecord } from './store/webhook-store.js'

// the tables the `webhooks` commands print without --json

/** Rows of cells as aligned columns, the first row the header. */
function formatTable (rows: ReadonlyArray<readonly string[]>): string {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()).join('\n')
}

/** `webhooks list`. */
export function formatEndpoints (database: string, endpoints: readonly WebhookEndpointRecord[]): string {
  if (endpoints.length === 0) return `No webhook endpoints in ${database}.`
  const table = formatTable([['ID', 'NAME', 'URL', 'EVENTS', 'CREATED', 'DISABLED', 'WAITING', 'FAILED', 'LAST SUCCESS', 'LAST FAILURE'],
    ...endpoints.map((endpoint) => [String(endpoint.id), endpoint.name, endpoint.url, endpoint.eventTypes.join(','), endpoint.createdAt,
      endpoint.disabledAt ?? '-', String(endpoint.waiting), String(endpoint.failed), endpoint.lastSuccessAt ?? '-',
      endpoint.lastFailureAt === null ? '-' : `${endpoint.lastFailureAt} (${endpoint.lastFailure ?? 'failed'})`])])
  return `Webhook endpoints in ${database}:\n\n${table}`
}

/** `webhooks deliveries`. */
export function formatAttempts (database: string, endpointId: number, query: WebhookAttemptQuery, attempts: readonly WebhookAttemptRecord[]): string {
  const which = query.result === 'failed' ? 'failed delivery attempts' : 'delivery attempts'
  if (attempts.length === 0) return `No ${which} of webhook endpoint ${endpointId} in ${database}.`
  const table = formatTable([['EVENT', 'TYPE', 'ATTEMPT', 'SENT', 'RESULT', 'TOOK', 'NEXT ATTEMPT'],
    ...attempts.map((attempt) => [String(attempt.eventId), attempt.eventType ?? '(expired)', String(attempt.attempt), attempt.attemptedAt,
      attempt.result === 'delivered' ? `delivered (${attempt.status ?? '2xx'})` : attempt.error ?? 'failed', `${attempt.durationMs} ms`,
      attempt.result === 'failed' ? 'given up' : attempt.nextAttemptAt ?? '-'])])
  return `The last ${attempts.length} ${which} of webhook endpoint ${endpointId} in ${database}, newest first:\n\n${table}`
}
