import type { WebhookSettings } from '../../infra/config/config.js'
import { assertPublicHost, hostOf, WebhookAddressError } from './address-guard.js'

/** Longest endpoint URL accepted. */
export const WEBHOOK_URL_MAX_LENGTH = 2000

/**
 * Checks an endpoint URL as `webhooks add` takes it: absolute `https:` (or `http:` with `WEBHOOK_ALLOW_HTTP`),
 * no credentials (they would be logged and shown), and, unless private networks are allowed, a host
 * that resolves only to public addresses. Throws a {@link WebhookAddressError} saying what is wrong.
 */
export async function checkWebhookUrl (text: string, settings: Pick<WebhookSettings, 'allowHttp' | 'allowPrivateNetworks'>): Promise<URL> {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) throw new WebhookAddressError(`the URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`)
  if (!URL.canParse(text)) throw new WebhookAddressError(`"${text}" is not an absolute URL`)
  const url = new URL(text)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && settings.allowHttp)) {
    throw new WebhookAddressError(`the URL must be https:${settings.allowHttp ? ' or http:' : ' (http: only with WEBHOOK_ALLOW_HTTP=true)'}, got ${url.protocol}`)
  }
  if (url.username !== '' || url.password !== '') throw new WebhookAddressError('the URL must not carry credentials; authenticate requests by their signature')
  if (url.hash !== '') throw new WebhookAddressError('the URL must not have a #fragment')
  if (!settings.allowPrivateNetworks) await assertPublicHost(hostOf(url))
  return url
}
