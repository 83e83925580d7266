// Where the QR code went, as a person reads it: PDF points rounded to a tenth, no floating-point noise.
import type { StampRect } from '@docanchor/client'

export function describeStamp(stamp: StampRect): string {
  const stampHeight = `${points(stamp.height)} pt tall with its caption`
  return `page ${stamp.page} at (${points(stamp.x)}, ${points(stamp.y)}), ${points(stamp.size)} pt (${stampHeight})`
}

/** A tenth of a point (1/720 inch) is finer than anyone places a stamp by hand. */
function points(value: number): number {
  return Math.round(value * 10) / 10
}
