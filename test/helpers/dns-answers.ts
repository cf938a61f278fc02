const PRELOAD = new URL('./dns-answers-preload.js', import.meta.url).href

/**
 * The environment that has a process a test starts (the server or the CLI, as built) answer the DNS
 * look-ups of `answers`' names with their addresses, without asking any resolver (dns-answers-preload.js):
 * what a name resolves to, set per process, with no real DNS and no edit of /etc/hosts.
 */
export function dnsAnswersEnv (answers: Record<string, string>): Record<string, string> {
  return { NODE_OPTIONS: `--import=${PRELOAD}`, TEST_DNS_ANSWERS: JSON.stringify(answers) }
}
