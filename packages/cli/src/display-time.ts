// One way to write a moment for a person, in every command's text: `2026-11-28 12:00:00 UTC`. UTC, so two people
// comparing outputs in different zones read the same thing; to the second, as no signature claims more. JSON output
// keeps the ISO 8601 strings as they came.

/** `value` as an ISO 8601 string, epoch milliseconds or a Date; a string that is not a date is returned as it is. */
export function displayTime(value: string | number | Date): string {
  const time = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value)
  if (!Number.isFinite(time)) return String(value)
  return `${new Date(time).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}
