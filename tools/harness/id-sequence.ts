/**
 * Ids handed out in order, each at most once, to every load that draws from it (a load's counting
 * body): a load starts at {@link IdSequence.next} and, once it has ended, {@link IdSequence.take}s as
 * many as it drew. Loads run one after another, so two never draw the same id.
 */
export class IdSequence {
  #next: number
  /** The last id there is to draw. */
  readonly last: number
  /** What an id past {@link last} means, for the error that says so (e.g. how to make the range bigger). */
  readonly #pastLast: string

  constructor (first: number, last: number, pastLast = 'its ids are all drawn') {
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first) {
      throw new Error(`an id sequence needs safe integers with 0 <= first <= last, not ${first}..${last}`)
    }
    this.#next = first
    this.last = last
    this.#pastLast = pastLast
  }

  /** The first id not drawn yet. */
  get next (): number {
    return this.#next
  }

  /**
   * Marks `count` ids from {@link next} on as drawn and returns the first of them. Throws when that passes
   * {@link last}: the load already sent those ids, and what it measured is not what it was meant to.
   */
  take (count: number): number {
    if (!Number.isSafeInteger(count) || count < 0) throw new Error(`cannot take ${count} ids`)
    const first = this.#next
    this.#next += count
    if (this.#next - 1 > this.last) throw new Error(`drew ids up to ${this.#next - 1}, past the last, ${this.last}: ${this.#pastLast}`)
    return first
  }
}
