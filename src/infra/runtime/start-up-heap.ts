import { setFlagsFromString } from 'node:v8'

/** V8's own factor by which a scavenge that finds many survivors doubles the young generation. */
const V8_DEFAULT_GROWTH_FACTOR = 2

const YOUNG_GENERATION_FLAG = /--(max-semi-space-size|min-semi-space-size|semi-space-growth-factor)\b/

// an operator who sized the young generation (NODE_OPTIONS, node's own flags) keeps what they chose
const operatorSizedIt = YOUNG_GENERATION_FLAG.test(`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`)

let held = false

/**
 * Keeps V8's young generation at its initial size (1 MB a semi-space) until {@link releaseYoungGeneration}.
 * Start-up allocates in a burst that mostly lives on (modules, schemas, prepared statements): each scavenge
 * finds many survivors, so V8 doubles the young generation up to 16 MB, and an idle instance then keeps
 * 5–6 MB of it resident that no request had asked for. The flag is read at each growth, not only at start
 * (docs/performance.md#start-up).
 */
export function holdYoungGenerationWhileStarting (): void {
  if (operatorSizedIt || held) return
  setFlagsFromString('--semi-space-growth-factor=1')
  held = true
}

/** Ready to serve: V8 sizes the young generation as before, so a load grows it as far as its survivors need. */
export function releaseYoungGeneration (): void {
  if (!held) return
  setFlagsFromString(`--semi-space-growth-factor=${V8_DEFAULT_GROWTH_FACTOR}`)
  held = false
}
