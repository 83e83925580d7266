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

/** A square on the page as displayed: lower-left corner from the displayed page's lower-left, and side. */
export interface DisplayedSquare {
  x: number
  y: number
  size: number
}

export interface PlacedStamp {
  /** The square in user space, [x1 y1 x2 y2]: an annotation's /Rect. */
  rect: [number, number, number, number]
  /** Maps the unit square onto it so that an image drawn there appears upright: the `cm` operands. */
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

/** The square `square` (displayed) in user space, and the matrix that draws a unit image upright into it. */
export function placeStamp({ box, rotation }: PageGeometry, square: DisplayedSquare): PlacedStamp {
  const { x: x0, y: y0, width: w, height: h } = box
  const { x: dx, y: dy, size: s } = square
  // The square's lower-left corner in user space, and the matrix turning the image against the page's rotation.
  let x: number
  let y: number
  let matrix: PlacedStamp['matrix']
  switch (rotation) {
    case 0:
      x = x0 + dx
      y = y0 + dy
      matrix = [s, 0, 0, s, x, y]
      break
    case 90:
      x = x0 + w - dy - s
      y = y0 + dx
      matrix = [0, s, -s, 0, x + s, y]
      break
    case 180:
      x = x0 + w - dx - s
      y = y0 + h - dy - s
      matrix = [-s, 0, 0, -s, x + s, y + s]
      break
    case 270:
      x = x0 + dy
      y = y0 + h - dx - s
      matrix = [0, -s, s, 0, x, y + s]
      break
  }
  return { rect: [x, y, x + s, y + s], matrix }
}

/**
 * Where the n-th stamp goes by default (n from 0): the bottom-right corner of the displayed page, then leftwards,
 * then a row up; undefined when the page has no room left for it.
 */
export function defaultSquare(
  geometry: PageGeometry,
  size: number,
  n: number,
  margin: number,
  gap: number,
): DisplayedSquare | undefined {
  const { width, height } = displayedSize(geometry)
  const perRow = Math.floor((width - 2 * margin + gap) / (size + gap))
  const rows = Math.floor((height - 2 * margin + gap) / (size + gap))
  if (perRow < 1 || rows < 1 || n >= perRow * rows) return undefined
  const column = n % perRow
  const row = Math.floor(n / perRow)
  return { x: width - margin - size - column * (size + gap), y: margin + row * (size + gap), size }
}

/** Why `square` does not fit the displayed page, naming the ranges that do; undefined when it fits. */
export function outsidePage(geometry: PageGeometry, square: DisplayedSquare): string | undefined {
  const { width, height } = displayedSize(geometry)
  const maxX = Math.floor((width - square.size) * 100) / 100
  const maxY = Math.floor((height - square.size) * 100) / 100
  if (square.size > Math.min(width, height)) {
    return `a code of ${square.size} pt does not fit the page, which shows ${round(width)} × ${round(height)} pt`
  }
  if (square.x < 0 || square.x > maxX || square.y < 0 || square.y > maxY) {
    return (
      `the code would lie off the page: x must be between 0 and ${maxX} and y between 0 and ${maxY} for a code of ` +
      `${square.size} pt (the page shows ${round(width)} × ${round(height)} pt)`
    )
  }
  return undefined
}

const round = (value: number) => Math.round(value * 100) / 100
