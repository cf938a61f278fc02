import { Type, type TString } from '@sinclair/typebox'
import { PATTERN_DESCRIPTION_KEYWORD } from '../../infra/schemas/keywords.js'
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_MS } from './policy.js'

// visible ASCII without space, quote and backslash: a UUID, a ULID or any random token fits
const KEY_CHARACTER = '[\\x21\\x23-\\x5B\\x5D-\\x7E]'
const KEY_TOKEN = `${KEY_CHARACTER}{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}`

/**
 * What an `Idempotency-Key` header may hold: the key as a bare token (as most clients send it) or
 * as the IETF draft's structured-field string (`"…"`). The one definition: validation checks it,
 * and the key's parser (idempotency-key.ts) reads the key out of it.
 */
export const IDEMPOTENCY_KEY_PATTERN = `^(?:${KEY_TOKEN}|"${KEY_TOKEN}")$`

/** What an `Idempotency-Key` header may hold, in words: the message of its 400. */
export const IDEMPOTENCY_KEY_DESCRIPTION = `an Idempotency-Key of 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, quotes or backslashes (e.g. a UUID), bare or in double quotes`

/** The `Idempotency-Key` request header of an operation that creates a `created` (`pet`, `order`), for its headers schema. */
export function idempotencyKeyHeaderSchema (created: string): TString {
  return Type.String({
    minLength: 1,
    // the quoted form adds its two quotes
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH + 2,
    pattern: IDEMPOTENCY_KEY_PATTERN,
    [PATTERN_DESCRIPTION_KEYWORD]: IDEMPOTENCY_KEY_DESCRIPTION,
    description: `Makes the create safe to retry (IETF httpapi Idempotency-Key draft): a unique value per new ${created}, e.g. a UUID, ` +
      `as a bare token or a quoted string, 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters without spaces, quotes or backslashes. ` +
      `A repeat with the same key and body, from the same API key within ${IDEMPOTENCY_TTL_MS / 3_600_000} hours, is answered with the first answer ` +
      'and `Idempotent-Replayed: true`, creating nothing; the same key with another body is 422 `idempotency_key_reused`; ' +
      'a repeat while the first is still being processed is 409 `idempotency_request_in_progress`.',
    examples: ['8e03978e-40d5-43e8-bc93-6894a57f9324']
  })
}
