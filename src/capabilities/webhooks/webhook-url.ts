import type { WebhookSettings } from '../../infra/config/config.js'
import { addressAllowedBy, assertReachableHost, hostOf, WebhookAddressError } from './address-guard.js'

/** Longest endpoint URL accepted. */
export const WEBHOOK_URL_MAX_LENGTH = 2000

/** The settings that decide which URLs a webhook may be sent to. */
type UrlSettings = Pick<WebhookSettings, 'allowHttp' | 'allowPrivateNetworks' | 'allowedNetworks'>

/** An endpoint URL `webhooks add` accepted, and what let it through. */
export interface CheckedWebhookUrl {
  url: URL
  /**
   * The settings beyond the defaults that let the URL through, each as `NAME=value` (`WEBHOOK_ALLOW_HTTP=true`): every
   * instance that delivers needs them too, or it refuses the endpoint's deliveries. Empty for a public `https:` URL.
   */
  allowedBy: string[]
}

/**
 * Checks an endpoint URL as `webhooks add` takes it: absolute `https:` (or `http:` with `WEBHOOK_ALLOW_HTTP`),
 * no credentials (they would be logged and shown), and a host that resolves only to addresses a webhook
 * may reach (see `addressRefusal`). Throws a {@link WebhookAddressError} saying what is wrong.
 */
export async function checkWebhookUrl (text: string, settings: UrlSettings): Promise<CheckedWebhookUrl> {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) throw new WebhookAddressError(`the URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`)
  if (!URL.canParse(text)) throw new WebhookAddressError(`"${text}" is not an absolute URL`)
  const url = new URL(text)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && settings.allowHttp)) {
    throw new WebhookAddressError(`the URL must be https:${settings.allowHttp ? ' or http:' : ' (http: only with WEBHOOK_ALLOW_HTTP=true)'}, got ${url.protocol}`)
  }
  if (url.username !== '' || url.password !== '') throw new WebhookAddressError('the URL must not carry credentials; authenticate requests by their signature')
  if (url.hash !== '') throw new WebhookAddressError('the URL must not have a #fragment')
  const addresses = await assertReachableHost(hostOf(url), settings)
  const allowedBy = new Set(addresses.map((address) => addressAllowedBy(address, settings)))
  return {
    url,
    allowedBy: [
      ...(url.protocol === 'http:' ? ['WEBHOOK_ALLOW_HTTP=true'] : []),
      ...(allowedBy.has('WEBHOOK_ALLOW_PRIVATE_NETWORKS') ? ['WEBHOOK_ALLOW_PRIVATE_NETWORKS=true'] : []),
      ...(allowedBy.has('WEBHOOK_ALLOWED_NETWORKS') ? [`WEBHOOK_ALLOWED_NETWORKS=${settings.allowedNetworks.join(',')}`] : [])
    ]
  }
}

/**
 * The URL as log lines name it: scheme, host and path, without the query (a receiver may take a token
 * there) or anything else that could carry a secret.
 */
export function webhookUrlForLog (url: string): string {
  if (!URL.canParse(url)) return '[unreadable URL]'
  const { origin, pathname } = new URL(url)
  return `${origin}${pathname}`
}
