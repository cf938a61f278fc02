import { PET_STATUSES, type PetStatus } from './pet-schemas.js'

/** Where each status may move to (besides staying as it is): the one rule of a pet's lifecycle. `sold` is final. */
export const STATUS_TRANSITIONS: Readonly<Record<PetStatus, readonly PetStatus[]>> = {
  available: ['pending', 'sold'],
  pending: ['available', 'sold'],
  sold: []
}

/** Whether a pet whose status is `from` may be given `to`; keeping the status it has is always allowed. */
export function isAllowedTransition (from: PetStatus, to: PetStatus): boolean {
  return from === to || STATUS_TRANSITIONS[from].includes(to)
}

/** The allowed transitions in prose, for the document and messages: "`available` → `pending`, …". */
export function describeTransitions (): string {
  return PET_STATUSES.flatMap((from) => STATUS_TRANSITIONS[from].map((to) => `\`${from}\` → \`${to}\``)).join(', ')
}

/** The statuses no transition leaves. */
export const FINAL_STATUSES: readonly PetStatus[] = PET_STATUSES.filter((status) => STATUS_TRANSITIONS[status].length === 0)
