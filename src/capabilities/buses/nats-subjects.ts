/**
 * Whether the NATS subject `subject` (dot-separated tokens, no wildcards) matches the subject filter `filter`,
 * as the server matches a stream's subjects: `*` stands for one token, a final `>` for one or more.
 */
export function subjectMatches (filter: string, subject: string): boolean {
  const wanted = filter.split('.')
  const tokens = subject.split('.')
  for (let index = 0; index < wanted.length; index++) {
    const token = wanted[index]
    if (token === '>') return index === wanted.length - 1 && tokens.length > index
    if (index >= tokens.length) return false
    if (token !== '*' && token !== tokens[index]) return false
  }
  return tokens.length === wanted.length
}
