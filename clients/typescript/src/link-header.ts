/**
 * The target of the first link with relation `rel` in an RFC 8288 `Link` header, resolved against
 * `base`; undefined when there is none.
 */
export function findLink (header: string | null, rel: string, base: string): URL | undefined {
  if (header === null) return undefined
  // each link is `<target>` followed by `; param=value` pairs; targets may hold commas, so match whole links
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const [, target = '', params = ''] = match
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params)
    const values = (rels?.[1] ?? rels?.[2] ?? '').toLowerCase().split(/\s+/)
    if (values.includes(rel.toLowerCase()) && URL.canParse(target, base)) return new URL(target, base)
  }
  return undefined
}
