// Where a stamp goes on a page, as a reader shows the page: inside its visible box (the CropBox clipped to the
// MediaBox, which need not start at 0 0), measured from the lower-left corner of the page as it appears once turned by
// its /Rotate, and drawn upright there. User space is where PDF content lives; "displayed" is what a reader shows.
import { PdfError } from './pdf-errors.ts'

export type Rotation = 0 | 90 | 180 | 270

/** A rectangle in user space: lower-left corner and size. */
export interface Box {
  x: number
  y: number
  width: number
  height: number
}

export interface PageGeometry {
  /** The visible box in user space. */
  box: Box
  rotation: Rotation
}

/** The stamp on the page as displayed: lower-left corner from the displayed page's lower-left, width and height. */
export interface DisplayedStamp {
  x: number
  y: number
  width: number
  height: number
}

export interface PlacedStamp {
  /** The stamp in user space, [x1 y1 x2 y2]: an annotation's /Rect. */
  rect: [number, number, number, number]
  /**
   * The appearance's /Matrix: it is drawn upright in a box of the displayed width and height, and this turns it
   * against the page's /Rotate (readers turn annotations with the page), into the first quadrant.
   */
  matrix: [number, number, number, number, number, number]
}

/**
 * A box from the four numbers of a PDF rectangle ([x1 y1 x2 y2], corners in either order; @libpdf/core's
 * getMediaBox/getCropBox answer them as x, y, width, height though the last two are the upper-right corner).
 */
export function boxOf(corners: { x: number; y: number; width: number; height: number }): Box {
  const [x1, x2] = [corners.x, corners.width].sort((a, b) => a - b) as [number, number]
  const [y1, y2] = [corners.y, corners.height].sort((a, b) => a - b) as [number, number]
  return { x: x1, y: y1, width: x2 - x1, height: y2 - y1 }
}

/** What a reader shows of a page: its CropBox clipped to its MediaBox (ISO 32000-1, 14.11.2). */
export function visibleBox(media: Box, crop: Box): Box {
  const x = Math.max(media.x, crop.x)
  const y = Math.max(media.y, crop.y)
  const width = Math.min(media.x + media.width, crop.x + crop.width) - x
  const height = Math.min(media.y + media.height, crop.y + crop.height) - y
  if (width <= 0 || height <= 0) throw new PdfError('ERR_PDF_UNSUPPORTED', 'the page has no visible area')
  return { x, y, width, height }
}

/** A /Rotate value as readers take it: a multiple of 90, turned clockwise, whatever its sign. */
export function rotationOf(degrees: number): Rotation {
  const turned = (((Math.round(degrees / 90) * 90) % 360) + 360) % 360
  return turned as Rotation
}

/** The page's size as displayed: width and height swap on a page turned a quarter. */
export function displayedSize({ box, rotation }: PageGeometry): { width: number; height: number } {
  return rotation === 90 || rotation === 270
    ? { width: box.height, height: box.width }
    : { width: box.width, height: box.height }
}

/** The stamp `stamp` (displayed) in user space, and the matrix that turns its upright appearance into it. */
export function placeStamp({ box, rotation }: PageGeometry, stamp: DisplayedStamp): PlacedStamp {
  const { x: x0, y: y0, width: w, height: h } = box
  const { x: dx, y: dy, width, height } = stamp
  switch (rotation) {
    case 0:
      return { rect: rectAt(x0 + dx, y0 + dy, width, height), matrix: [1, 0, 0, 1, 0, 0] }
    case 90:
      return { rect: rectAt(x0 + w - dy - height, y0 + dx, height, width), matrix: [0, 1, -1, 0, height, 0] }
    case 180:
      return {
        rect: rectAt(x0 + w - dx - width, y0 + h - dy - height, width, height),
        matrix: [-1, 0, 0, -1, width, height],
      }
    case 270:
      return { rect: rectAt(x0 + dy, y0 + h - dx - width, height, width), matrix: [0, -1, 1, 0, 0, width] }
  }
}

const rectAt = (x: number, y: number, width: number, height: number): PlacedStamp['rect'] => [
  x,
  y,
  x + width,
  y + height,
]

/**
 * Where the n-th stamp goes by default (n from 0): the bottom-right corner of the displayed page, then leftwards,
 * then a row up; undefined when the page has no room left for it.
 */
export function defaultPlace(
  geometry: PageGeometry,
  stamp: { width: number; height: number },
  n: number,
  margin: number,
  gap: number,
): DisplayedStamp | undefined {
  const { width, height } = displayedSize(geometry)
  const perRow = Math.floor((width - 2 * margin + gap) / (stamp.width + gap))
  const rows = Math.floor((height - 2 * margin + gap) / (stamp.height + gap))
  if (perRow < 1 || rows < 1 || n >= perRow * rows) return undefined
  const column = n % perRow
  const row = Math.floor(n / perRow)
  return {
    x: width - margin - stamp.width - column * (stamp.width + gap),
    y: margin + row * (stamp.height + gap),
    ...stamp,
  }
}

/**
 * Why `stamp` does not fit the displayed page, naming the ranges that do; undefined when it fits. `size` is the
 * code's side, as the user gave it.
 */
export function outsidePage(geometry: PageGeometry, stamp: DisplayedStamp, size: number): string | undefined {
  const { width, height } = displayedSize(geometry)
  const maxX = Math.floor((width - stamp.width) * 100) / 100
  const maxY = Math.floor((height - stamp.height) * 100) / 100
  const sizes = `its stamp, caption included, is ${round(stamp.width)} × ${round(stamp.height)} pt; the page shows ${round(width)} × ${round(height)} pt`
  if (stamp.width > width || stamp.height > height) return `a code of ${size} pt does not fit the page (${sizes})`
  if (stamp.x < 0 || stamp.x > maxX || stamp.y < 0 || stamp.y > maxY) {
    return (
      `the code would lie off the page: x must be between 0 and ${maxX} and y between 0 and ${maxY} for a code of ` +
      `${size} pt (${sizes})`
    )
  }
  return undefined
}

const round = (value: number) => Math.round(value * 100) / 100
