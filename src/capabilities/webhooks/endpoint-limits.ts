// What an endpoint may be, written once: the rules, the schemas, the CLI's help and the documents read these (imports nothing)

/** Most webhook endpoints one deployment registers: each is served in turn, so many more would spread delivery thin. */
export const WEBHOOK_ENDPOINTS_MAX = 100
/** Longest name of an endpoint, in characters. */
export const ENDPOINT_NAME_MAX_LENGTH = 100
/** Longest description of an endpoint, in characters. */
export const ENDPOINT_DESCRIPTION_MAX_LENGTH = 500
/** Highest rate limit an endpoint may ask for, in deliveries per second: above it, the limit would not limit anything a dispatcher sends. */
export const ENDPOINT_RATE_LIMIT_MAX = 1000
/** How long a rotated-out secret keeps signing beside the new one, so receivers can switch without losing a delivery. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3_600_000
