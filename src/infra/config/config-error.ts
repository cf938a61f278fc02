/** A setting is missing or wrong; the message names the variable. */
export class ConfigError extends Error {
  constructor (readonly variable: string, problem: string) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}
