// Conditional requests: whether a client's If-None-Match names the current entity tag.

/** If-None-Match holds `*` or a list of tags, weak ones compared by their opaque part (RFC 9110 §13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header === etag) return true
  return header.split(',').some((tag) => {
    const trimmed = tag.trim()
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`
  })
}
