// Times are shown twice: in the viewer's own time zone, which is what people read, and in UTC, which is what two
// people in different places can compare.

const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'long' })

export function toDate(unixSeconds: number): Date {
  return new Date(unixSeconds * 1000)
}

/** e.g. "21 November 2025 at 05:40:00 CET", in the viewer's locale and time zone. */
export function formatLocal(unixSeconds: number): string {
  return local.format(toDate(unixSeconds))
}

/** e.g. "2025-11-21 04:40:00 UTC". */
export function formatUtc(unixSeconds: number): string {
  return `${toDate(unixSeconds).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** The viewer's IANA time zone, e.g. "Europe/Berlin", when the browser says. */
export function viewerTimeZone(): string | undefined {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined
}
