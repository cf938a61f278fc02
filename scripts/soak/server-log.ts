/** What the server under load logged: lines at warn and above, counted and a few kept. */

const LOG_EXCERPT_LINES = 10

/** Counts the server's log lines at warn and above (pino JSON on stdout) and keeps the first few. */
export class LogLevelCounter {
  warnLines = 0
  errorLines = 0
  readonly excerpt: string[] = []

  read (line: string): void {
    if (line.trim() === '') return
    let level: unknown
    try {
      level = (JSON.parse(line) as { level?: unknown }).level
    } catch {
      level = undefined
    }
    // not JSON (a printed key, say) counts as nothing; pino levels: 40 warn, 50 error, 60 fatal
    if (typeof level !== 'number' || level < 40) return
    if (level >= 50) this.errorLines++
    else this.warnLines++
    if (this.excerpt.length < LOG_EXCERPT_LINES) this.excerpt.push(line.slice(0, 1_000))
  }
}
