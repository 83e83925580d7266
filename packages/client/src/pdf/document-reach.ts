// Where every object of one revision's document is used, as a reader reaches it: from the catalog's entries (each
// entry a "zone": the pages, the form, the DSS, the outline, ...) and the trailer's /Info. Pages are numbered and each
// object they use is tied to the pages and the part of the page (content, resources, annotations) that use it, so a
// change to it can be named in a user's words. References to objects the revision does not define are kept too: a
// later revision that defines one changes what an unchanged object shows (a hidden change).

import { isDict, type RevisionResolver } from './pdf-revisions.ts'
import { type PdfDict, PdfName, PdfRef, type PdfValue } from './pdf-syntax.ts'
import { tooMuch } from './read-budget.ts'

/** The part of a page an object belongs to. */
export type PageRole = 'page' | 'content' | 'resources' | 'annots' | 'annotation' | 'page-tree'

export interface ObjectUse {
  /** Catalog keys (and `Info`) through which a reader reaches the object: `Pages`, `AcroForm`, `DSS`, ... */
  zones: Set<string>
  /** The first key path from the zone to it, for naming what it is (`Names` › `JavaScript` › ...). */
  path: string[]
  /** 1-based pages that use it, the first few. */
  pages: Set<number>
  roles: Set<PageRole>
}

export interface DocumentReach {
  rootNum: number | undefined
  catalog: PdfDict | undefined
  /** Page object number → 1-based page number. */
  pages: Map<number, number>
  /** Object numbers of indirect /Annots arrays → their page. */
  annotsArrays: Map<number, number>
  uses: Map<number, ObjectUse>
  /** Object numbers referred to but not defined in this revision → what referred to them, in words. */
  dangling: Map<number, string>
  inUse(num: number): boolean
}

/** An object used by more pages than this is shared (a font, say): naming more pages says nothing more. */
const MAX_PAGES_PER_OBJECT = 8
/** Keys that point back up the tree: following them would reach everything from everywhere. */
const UPWARD_KEYS = new Set(['Parent', 'P'])
const PAGE_ROLE_OF_KEY: Record<string, PageRole> = {
  Contents: 'content',
  Resources: 'resources',
  Annots: 'annots',
}

interface Pending {
  value: PdfValue
  path: string[]
  role: PageRole | undefined
}

export async function readDocumentReach(
  resolver: RevisionResolver,
  trailer: PdfDict,
  objectCount: number,
): Promise<DocumentReach> {
  const uses = new Map<number, ObjectUse>()
  const dangling = new Map<number, string>()
  const pages = new Map<number, number>()
  const annotsArrays = new Map<number, number>()
  const inUse = (num: number) => {
    const found = resolver.entryOf(num)
    return found !== undefined && found.entry.type !== 'free'
  }
  // Each object is visited once per zone and, in the pages, once per page up to the cap: bounded by the file.
  let visits = 0
  const maxVisits = (objectCount + 64) * (MAX_PAGES_PER_OBJECT + 16)
  const use = (num: number): ObjectUse => {
    let found = uses.get(num)
    if (!found) {
      found = { zones: new Set(), path: [], pages: new Set(), roles: new Set() }
      uses.set(num, found)
    }
    return found
  }

  /** Walks everything `start` reaches in `zone`, attributing it to `page` when given. */
  const walk = async (zone: string, start: Pending[], seen: Set<number>, page?: number) => {
    const stack = [...start]
    while (stack.length > 0) {
      const { value, path, role } = stack.pop()!
      let resolved: PdfValue | undefined = value
      if (value instanceof PdfRef) {
        if (!inUse(value.num)) {
          if (!dangling.has(value.num)) dangling.set(value.num, describeUse(zone, path, role, page))
          continue
        }
        if (seen.has(value.num) || value.num === rootNum) continue
        const known = uses.get(value.num)
        if (page !== undefined && known && known.pages.size >= MAX_PAGES_PER_OBJECT && known.zones.has(zone)) continue
        seen.add(value.num)
        if (++visits > maxVisits) throw tooMuch('its objects refer to each other far more than any document')
        const object = await resolver.object(value)
        resolved = object?.stream?.dict ?? object?.value
        // A page (a link's destination, say) belongs to the page tree, not to whatever points at it.
        if (isDict(resolved) && isPageNode(resolved)) continue
        const used = use(value.num)
        if (!used.zones.has(zone)) used.path = path
        used.zones.add(zone)
        if (page !== undefined) used.pages.add(page)
        if (role) used.roles.add(role)
      }
      if (Array.isArray(resolved)) {
        for (const item of resolved) stack.push({ value: item, path, role })
      } else if (isDict(resolved)) {
        for (const [key, item] of resolved.entries) {
          if (UPWARD_KEYS.has(key)) continue
          stack.push({ value: item, path: [...path, key], role })
        }
      }
    }
  }

  const rootRef = trailer.get('Root')
  const rootNum = rootRef instanceof PdfRef ? rootRef.num : undefined
  const catalogValue = await resolver.resolve(rootRef)
  const catalog = isDict(catalogValue) ? catalogValue : undefined
  if (catalog) {
    for (const [key, value] of catalog.entries) {
      if (key === 'Pages') await walkPages(value)
      else if (key !== 'Type') await walk(key, [{ value, path: [key], role: undefined }], new Set())
    }
  }
  const info = trailer.get('Info')
  if (info !== undefined) await walk('Info', [{ value: info, path: ['Info'], role: undefined }], new Set())

  /** The page tree: nodes through /Kids in order, each leaf a numbered page walked on its own. */
  async function walkPages(top: PdfValue) {
    const nodes = new Set<number>()
    const stack: PdfValue[] = [top]
    while (stack.length > 0) {
      const value = stack.pop()!
      if (value instanceof PdfRef) {
        if (!inUse(value.num)) {
          if (!dangling.has(value.num)) dangling.set(value.num, 'the page tree')
          continue
        }
        if (nodes.has(value.num)) continue
        nodes.add(value.num)
        if (++visits > maxVisits) throw tooMuch('its page tree is far larger than the file')
      }
      const node = await resolver.resolve(value)
      if (!isDict(node)) continue
      const kids = await resolver.resolve(node.get('Kids'))
      if (Array.isArray(kids) && nameOf(node.get('Type')) !== 'Page') {
        if (value instanceof PdfRef) {
          const used = use(value.num)
          used.zones.add(PAGES_ZONE)
          used.roles.add('page-tree')
        }
        // Inherited attributes (resources, boxes) belong to the tree.
        const inherited = [...node.entries].filter(([key]) => key !== 'Kids' && !UPWARD_KEYS.has(key))
        await walk(
          PAGES_ZONE,
          inherited.map(([key, item]) => ({ value: item, path: ['Pages', key], role: 'page-tree' as const })),
          new Set(),
        )
        const kidsRef = node.get('Kids')
        if (kidsRef instanceof PdfRef) use(kidsRef.num).zones.add(PAGES_ZONE)
        for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!)
        continue
      }
      const number = pages.size + 1
      if (value instanceof PdfRef) {
        pages.set(value.num, number)
        const used = use(value.num)
        used.zones.add(PAGES_ZONE)
        used.pages.add(number)
        used.roles.add('page')
      }
      const annots = node.get('Annots')
      if (annots instanceof PdfRef) annotsArrays.set(annots.num, number)
      const start: Pending[] = []
      for (const [key, item] of node.entries) {
        if (UPWARD_KEYS.has(key)) continue
        start.push({ value: item, path: ['Pages', key], role: PAGE_ROLE_OF_KEY[key] ?? 'page' })
      }
      await walkPage(start, number)
    }
  }

  /** One page: its annotations are its own (role annotation), whatever they reach in turn. */
  async function walkPage(start: Pending[], page: number) {
    const seen = new Set<number>()
    const annotations: Pending[] = []
    const rest: Pending[] = []
    for (const item of start) {
      if (item.role !== 'annots') {
        rest.push(item)
        continue
      }
      if (item.value instanceof PdfRef) {
        if (!inUse(item.value.num)) {
          dangling.set(item.value.num, describeUse(PAGES_ZONE, item.path, 'annots', page))
          continue
        }
        const used = use(item.value.num)
        used.zones.add(PAGES_ZONE)
        used.pages.add(page)
        used.roles.add('annots')
      }
      const items = await resolver.resolve(item.value)
      if (Array.isArray(items)) {
        for (const annotation of items) annotations.push({ value: annotation, path: item.path, role: 'annotation' })
      }
    }
    await walk(PAGES_ZONE, annotations, seen, page)
    await walk(PAGES_ZONE, rest, seen, page)
  }

  return { rootNum, catalog, pages, annotsArrays, uses, dangling, inUse }
}

export const PAGES_ZONE = 'Pages'

function isPageNode(dict: PdfDict): boolean {
  const type = nameOf(dict.get('Type'))
  return type === 'Page' || type === 'Pages'
}

export function nameOf(value: PdfValue | undefined): string | undefined {
  return value instanceof PdfName ? value.name : undefined
}

/** What the part of the document reached by `path` in `zone` is, in a reader's words. */
export function describeUse(zone: string, path: readonly string[], role: PageRole | undefined, page?: number): string {
  if (zone === PAGES_ZONE) {
    const of = page === undefined ? 'a page' : `page ${page}`
    switch (role) {
      case 'content':
        return `${of}'s content`
      case 'resources':
        return `${of}'s resources (fonts, images, graphics states)`
      case 'annots':
        return `${of}'s list of annotations`
      case 'annotation':
        return `an annotation on ${of}, or its appearance`
      case 'page-tree':
        return 'the page tree (its pages, their order, what they inherit)'
      default:
        return `${of} (its /${path[1] ?? 'dictionary'})`
    }
  }
  return zoneText(zone, path)
}

/** The catalog's entries (and the trailer's /Info) in a reader's words. */
export function zoneText(zone: string, path: readonly string[] = []): string {
  const keys = new Set(path)
  switch (zone) {
    case 'AcroForm':
      return 'a form field, its value or its appearance'
    case 'OpenAction':
    case 'AA':
      return keys.has('JS')
        ? 'JavaScript run when the document is opened or used'
        : 'an action run when the document is opened or used'
    case 'Names':
      if (keys.has('JavaScript') || keys.has('JS')) return 'the document’s JavaScript'
      if (keys.has('EmbeddedFiles') || keys.has('EF')) return 'the files embedded in the document'
      return 'the document’s name tree (destinations, JavaScript, embedded files)'
    case 'Outlines':
      return 'the outline (bookmarks and what they do)'
    case 'OCProperties':
      return 'the optional content (which layers are shown)'
    case 'Info':
      return 'the document information (title, author, dates)'
    case 'Metadata':
      return 'the document’s XMP metadata'
    case 'Pages':
      return 'the page tree'
    case 'StructTreeRoot':
      return 'the structure tree (reading order, tags)'
    default:
      return `the document catalog’s /${zone}`
  }
}
