// What each incremental revision changed in what a reader shows, judged against what a later revision may change
// without altering what an earlier signer saw (ISO 32000-2's "allowed changes", as DocMDP P=2 reads them, and the
// EU's DSS validator and Acrobat enforce them). Revisions are compared as resolved objects, the ones a reader renders
// (the last definition through every /Prev), never as bytes. Allowed after a signature: a new signature field with
// its widget on a page's /Annots and in the form's /Fields (its appearance is its signer's, so it must be signed in
// the same revision or invisible), the signing of an empty signature field, the form's /SigFlags, this project's
// metadata stream, a DSS and what it holds, and document timestamps (signature fields as well); and, in the revision
// of a form's first signature only, the drawing of a form that asked readers to draw it (/NeedAppearances cleared,
// each field's widget given an appearance, as Acrobat does when it signs), reported as a note: nobody had signed what
// readers drew before, and poppler would otherwise hide the signature (form-appearances.ts). Everything else a
// reader could show differently is a change. Rewriting the document information (/Info) or the XMP metadata changes
// nothing shown, so it is reported as a note, not as a change (docs/security.md says why).

import { bytesEqual } from './cms/der.ts'
import type { XrefEntry } from './cross-reference.ts'
import {
  type DocumentReach,
  describeUse,
  nameOf,
  PAGES_ZONE,
  type PageRole,
  readDocumentReach,
  zoneText,
} from './document-reach.ts'
import type { OpenedPdf } from './encrypted-pdf.ts'
import { isDict, type PdfStructure, RevisionResolver } from './pdf-revisions.ts'
import { type IndirectObject, PdfDict, PdfName, PdfRef, PdfString, type PdfValue } from './pdf-syntax.ts'

export type ChangeKind =
  | 'content'
  | 'resources'
  | 'page'
  | 'page-tree'
  | 'annotation'
  | 'form'
  | 'action'
  | 'javascript'
  | 'embedded-file'
  | 'outline'
  | 'optional-content'
  | 'catalog'
  | 'hidden'
  | 'certification'
  | 'encryption'

export interface RevisionChange {
  /** The revision that made it. */
  revision: number
  kind: ChangeKind
  /** 1-based pages it touches; empty when it belongs to no page. */
  pages: number[]
  /** What changed, in a reader's words ("page 1's content", "an annotation on page 2"). */
  what: string
}

/** A change that alters nothing shown, reported all the same. */
export interface RevisionNote {
  revision: number
  what: string
}

export interface RevisionChanges {
  changes: RevisionChange[]
  notes: RevisionNote[]
}

/** Zones whose objects a reader never renders: validation data, and this project's own metadata stream. */
const UNSHOWN_ZONES = new Set(['DSS', 'AnchorMetadata', 'Extensions'])
/** Zones of document metadata: not rendered, but worth a note. */
const METADATA_ZONES = new Set(['Info', 'Metadata'])
/** Zones named first when an object is used in several: what is seen on the page comes first. */
const ZONE_ORDER = [PAGES_ZONE, 'AcroForm', 'OpenAction', 'AA', 'Names', 'OCProperties', 'Outlines']
/** Parts of a page named first when an object serves several: what is drawn comes first. */
const ROLE_ORDER: readonly PageRole[] = ['content', 'resources', 'annotation', 'annots', 'page-tree', 'page']
/** Widget flags that keep it from being shown: Hidden (2) and NoView (32). */
const UNSHOWN_WIDGET_FLAGS = 2 | 32
const SIGNATURE_TYPES = new Set(['Sig', 'DocTimeStamp'])

/**
 * The changes of every revision from `from` on, each against the revision before it. Revision 0 has nothing before
 * it, so `from` is at least 1.
 */
export async function findRevisionChanges(
  structure: PdfStructure,
  from: number,
  opened?: Pick<OpenedPdf, 'streamData' | 'decryptString' | 'decryptStream'>,
): Promise<RevisionChanges> {
  const result: RevisionChanges = { changes: [], notes: [] }
  const last = structure.revisions.length - 1
  const first = Math.max(1, from)
  if (first > last) return result
  const objectCount = structure.revisions.reduce((count, revision) => count + revision.entries.size, 0)
  const stateOf = async (index: number): Promise<RevisionState> => {
    const resolver = new RevisionResolver(structure, index, opened?.streamData)
    const reach = await readDocumentReach(resolver, structure.revisions[index]!.trailer, objectCount)
    return { index, resolver, reach }
  }
  let before = await stateOf(first - 1)
  for (let index = first; index <= last; index++) {
    const after = await stateOf(index)
    await compareRevisions(structure, before, after, result, opened)
    before = after
  }
  return result
}

interface RevisionState {
  index: number
  resolver: RevisionResolver
  reach: DocumentReach
}

/** One comparison: every object the later revision defines, judged by the rules above. */
async function compareRevisions(
  structure: PdfStructure,
  before: RevisionState,
  after: RevisionState,
  result: RevisionChanges,
  opened?: Pick<OpenedPdf, 'decryptString' | 'decryptStream'>,
): Promise<void> {
  const revision = structure.revisions[after.index]!
  const change = (kind: ChangeKind, what: string, pages: number[] = []) => {
    if (result.changes.some((known) => known.revision === after.index && known.what === what)) return
    result.changes.push({ revision: after.index, kind, pages, what })
  }
  const note = (what: string) => {
    if (result.notes.some((known) => known.revision === after.index && known.what === what)) return
    result.notes.push({ revision: after.index, what })
  }
  const beforeTrailer = structure.revisions[before.index]!.trailer
  // A writer may repeat the encryption dictionary in its trailer rather than refer to it: what counts is its value.
  const encryptBefore = await before.resolver.resolve(beforeTrailer.get('Encrypt'))
  if (!sameValue(encryptBefore, await after.resolver.resolve(revision.trailer.get('Encrypt')))) {
    change('encryption', 'the document’s encryption')
  }
  if (before.reach.rootNum === undefined || before.reach.rootNum !== after.reach.rootNum) {
    change('catalog', 'the document catalog (/Root), replaced by another')
    return
  }
  if (!sameValue(beforeTrailer.get('Info'), revision.trailer.get('Info'))) note(zoneText('Info'))

  const rules = new AllowedChanges(before, after, change, note)
  const changed: number[] = []
  for (const [num, entry] of revision.entries) {
    const older = before.reach.inUse(num) ? await before.resolver.object(new PdfRef(num, 0)) : undefined
    const newer = entry.type === 'free' ? undefined : await after.resolver.object(new PdfRef(num, 0))
    const clear = (object: IndirectObject, state: RevisionState) =>
      opened && state.resolver.entryOf(num)?.entry.type === 'offset' ? inClear(object, opened) : object
    if (older && newer && sameObject(clear(older, before), clear(newer, after))) continue
    changed.push(num)
    rules.objects.set(num, { older, newer })
  }
  await rules.judgeObjectStreams(structure, revision.entries)
  await rules.judgeCatalog()
  for (const num of changed) await rules.judgeObject(num)
}

interface ChangedObject {
  older: IndirectObject | undefined
  newer: IndirectObject | undefined
}

type Report = (kind: ChangeKind, what: string, pages?: number[]) => void

/** The rules, applied to one pair of revisions. */
class AllowedChanges {
  readonly objects = new Map<number, ChangedObject>()
  /** Changed objects a rule has judged already (the catalog, the form, a page, an /Annots array, ...). */
  private readonly judged = new Set<number>()

  /** Whether this revision may draw the form (see the file's opening comment); settled by judgeCatalog. */
  private formDrawing = false

  constructor(
    private readonly before: RevisionState,
    private readonly after: RevisionState,
    private readonly change: Report,
    private readonly note: (what: string) => void,
  ) {}

  private isNew(value: PdfValue | undefined): value is PdfRef {
    return value instanceof PdfRef && !this.before.reach.inUse(value.num) && this.after.reach.inUse(value.num)
  }

  /** A redefined object stream changes every object still read from it, though none of them is redefined. */
  async judgeObjectStreams(structure: PdfStructure, entries: Map<number, XrefEntry>): Promise<void> {
    for (const num of this.objects.keys()) {
      const older = this.objects.get(num)!.older
      if (nameOf(older?.stream?.dict.get('Type')) !== 'ObjStm') continue
      for (let r = this.after.index - 1; r >= 0; r--) {
        for (const [held, entry] of structure.revisions[r]!.entries) {
          if (entry.type !== 'compressed' || entry.stream !== num || entries.has(held)) continue
          if (this.after.resolver.entryOf(held)?.revision !== r) continue
          this.judged.add(num)
          this.change('hidden', `object stream ${num}, which holds objects of the signed document`)
          return
        }
      }
    }
  }

  /** The catalog: only the entries a signature, a DSS or metadata add may differ. */
  async judgeCatalog(): Promise<void> {
    const rootNum = this.after.reach.rootNum!
    this.judged.add(rootNum)
    const older = this.before.reach.catalog
    const newer = this.after.reach.catalog
    if (!older || !newer) {
      this.change('catalog', 'the document catalog')
      return
    }
    for (const key of new Set([...older.entries.keys(), ...newer.entries.keys()])) {
      const a = older.get(key)
      const b = newer.get(key)
      if (sameValue(a, b) && key !== 'AcroForm') continue
      switch (key) {
        case 'AcroForm':
          await this.judgeForm(a, b)
          break
        case 'AnchorMetadata':
          if (!(this.isNew(b) && (await this.isAnchorMetadata(b)))) this.change('catalog', zoneText(key))
          break
        case 'DSS':
        case 'Extensions':
          break
        case 'Metadata':
          this.note(zoneText(key))
          break
        case 'Perms':
          await this.judgePerms(a, b)
          break
        default: {
          const below = await this.keysBelow(b)
          this.change(kindOfZone(key, below), zoneText(key, below))
        }
      }
    }
  }

  private async isAnchorMetadata(ref: PdfRef): Promise<boolean> {
    const object = await this.after.resolver.object(ref)
    return nameOf(object?.stream?.dict.get('Type')) === 'AnchorMetadata'
  }

  /** The keys of a new dictionary, so that "/Names" can say it holds JavaScript or embedded files. */
  private async keysBelow(value: PdfValue | undefined): Promise<string[]> {
    const dict = await this.after.resolver.resolve(value)
    return isDict(dict) ? [...dict.entries.keys()] : []
  }

  /**
   * /Perms certifies a document; only its first signature may (ISO 32000-1, 12.8.2.2), so it may appear only in a
   * revision before which nothing was signed, and only for a signature that revision makes.
   */
  private async judgePerms(older: PdfValue | undefined, newer: PdfValue | undefined): Promise<void> {
    const perms = await this.after.resolver.resolve(newer)
    const docMdp = isDict(perms) ? perms.get('DocMDP') : undefined
    const allowed =
      older === undefined &&
      isDict(perms) &&
      [...perms.entries.keys()].every((key) => key === 'DocMDP') &&
      this.isNew(docMdp) &&
      !(await this.anythingSigned(this.before))
    if (!allowed) this.change('certification', 'the document’s certification (/Perms)')
  }

  private async anythingSigned(state: RevisionState): Promise<boolean> {
    const form = await state.resolver.resolve(state.reach.catalog?.get('AcroForm'))
    const fields = isDict(form) ? await state.resolver.resolve(form.get('Fields')) : undefined
    if (!Array.isArray(fields)) return false
    for (const field of fields) {
      const dict = await state.resolver.resolve(field)
      if (isDict(dict) && dict.get('V') !== undefined && (await this.fieldType(state, dict)) === 'Sig') return true
    }
    return false
  }

  /** The form: fields may only be added, and only signature fields; /SigFlags may change. */
  private async judgeForm(olderValue: PdfValue | undefined, newerValue: PdfValue | undefined): Promise<void> {
    for (const value of [olderValue, newerValue]) if (value instanceof PdfRef) this.judged.add(value.num)
    const older = await this.before.resolver.resolve(olderValue)
    const newer = await this.after.resolver.resolve(newerValue)
    if (!isDict(newer)) {
      if (olderValue !== undefined) this.change('form', 'the form (removed)')
      return
    }
    const olderDict = isDict(older) ? older : new PdfDict(new Map())
    this.formDrawing = olderDict.get('NeedAppearances') === true && !(await this.anythingSigned(this.before))
    const olderFields = await this.before.resolver.resolve(olderDict.get('Fields'))
    const hadFields = Array.isArray(olderFields) && olderFields.length > 0
    for (const key of new Set([...olderDict.entries.keys(), ...newer.entries.keys()])) {
      const a = olderDict.get(key)
      const b = newer.get(key)
      if (key === 'Fields') {
        for (const value of [a, b]) if (value instanceof PdfRef) this.judged.add(value.num)
        await this.judgeAppended(
          Array.isArray(olderFields) ? olderFields : [],
          await this.after.resolver.resolve(b),
          'the form’s list of fields',
          (field) => this.judgeNewField(field),
        )
        continue
      }
      if (sameValue(a, b) || key === 'SigFlags') continue
      if (key === 'NeedAppearances' && this.formDrawing && b !== true) {
        this.note('the form’s fields, drawn for the readers that were asked to draw them (/NeedAppearances)')
        continue
      }
      // A new form's default appearance and resources serve only the signature fields it is made for; an older
      // form's may gain resources (a signer's font), never change those its fields may be drawn with.
      if ((key === 'DA' || key === 'DR') && !hadFields) continue
      if ((key === 'DA' && a === undefined) || (key === 'DR' && (await this.onlyExtends(a, b)))) continue
      this.change('form', `the form’s settings (/${key})`)
    }
  }

  /** Whether the dictionary `newer` holds everything `older` does, alike, with entries added at most. */
  private async onlyExtends(older: PdfValue | undefined, newer: PdfValue | undefined, depth = 0): Promise<boolean> {
    if (sameValue(older, newer)) return true
    if (depth > 4) return false
    const a = await this.before.resolver.resolve(older)
    const b = await this.after.resolver.resolve(newer)
    if (a === undefined) return true
    if (!isDict(a) || !isDict(b)) return false
    for (const [key, value] of a.entries) {
      if (!(await this.onlyExtends(value, b.get(key), depth + 1))) return false
    }
    return true
  }

  /** An array that may only grow at its end, each new item judged by `judgeItem`. */
  private async judgeAppended(
    older: PdfValue[],
    newer: PdfValue | undefined,
    what: string,
    judgeItem: (item: PdfValue) => Promise<void>,
  ): Promise<void> {
    const items = Array.isArray(newer) ? newer : []
    if (items.length < older.length || older.some((item, i) => !sameValue(item, items[i]))) {
      this.change(what.startsWith('the form') ? 'form' : 'annotation', `${what} (entries removed or reordered)`)
      return
    }
    for (const item of items.slice(older.length)) await judgeItem(item)
  }

  /** A field added to the form: a new signature field. */
  private async judgeNewField(value: PdfValue): Promise<void> {
    const field = await this.after.resolver.resolve(value)
    if (!this.isNew(value) || !isDict(field) || (await this.fieldType(this.after, field)) !== 'Sig') {
      this.change('form', 'the form’s fields (one that is not a signature field, added)')
    }
  }

  /** The field type, inherited through /Parent (ISO 32000-1, 12.7.3.1). */
  private async fieldType(state: RevisionState, field: PdfDict): Promise<string | undefined> {
    let node: PdfDict | undefined = field
    for (let depth = 0; node && depth < 32; depth++) {
      const type = nameOf(node.get('FT'))
      if (type) return type
      const parent = await state.resolver.resolve(node.get('Parent'))
      node = isDict(parent) ? parent : undefined
    }
    return undefined
  }

  /** An annotation added to a page: the widget of a signature field, signed in this revision or not shown. */
  private async judgeNewAnnotation(value: PdfValue, page: number): Promise<void> {
    const widget = await this.after.resolver.resolve(value)
    const isWidget = isDict(widget) && nameOf(widget.get('Subtype')) === 'Widget'
    if (!this.isNew(value) || !isWidget || (await this.fieldType(this.after, widget)) !== 'Sig') {
      this.change('annotation', `page ${page}'s annotations (one added)`, [page])
      return
    }
    if (await this.isSigned(widget)) return
    if (!(await this.isShown(widget))) return
    this.change('annotation', `page ${page}'s annotations (an unsigned signature field that shows, added)`, [page])
  }

  /** The widget's field has a signature made in this very revision. */
  private async isSigned(widget: PdfDict): Promise<boolean> {
    let node: PdfDict | undefined = widget
    for (let depth = 0; node && depth < 32; depth++) {
      const value = node.get('V')
      if (value !== undefined) {
        const signature = await this.after.resolver.resolve(value)
        return this.isNew(value) && isDict(signature) && SIGNATURE_TYPES.has(nameOf(signature.get('Type')) ?? 'Sig')
      }
      const parent = await this.after.resolver.resolve(node.get('Parent'))
      node = isDict(parent) ? parent : undefined
    }
    return false
  }

  private async isShown(widget: PdfDict): Promise<boolean> {
    const flags = widget.get('F')
    if (typeof flags === 'number' && (flags & UNSHOWN_WIDGET_FLAGS) !== 0) return false
    if (widget.get('AP') === undefined) return false
    const rect = await this.after.resolver.resolve(widget.get('Rect'))
    if (!Array.isArray(rect) || rect.length !== 4 || !rect.every((n) => typeof n === 'number')) return true
    const [x1, y1, x2, y2] = rect as number[]
    return x1 !== x2 && y1 !== y2
  }

  /** One redefined, added or freed object, not judged as part of the catalog or form. */
  async judgeObject(num: number): Promise<void> {
    if (this.judged.has(num)) return
    const { older, newer } = this.objects.get(num)!
    const reach = this.after.reach
    if (!newer) {
      // Freed: a change only when something still refers to it (and now finds nothing).
      if (reach.dangling.has(num)) this.change('hidden', `${reach.dangling.get(num)} (an object it uses, removed)`)
      return
    }
    if (!older) {
      // New: shown only through a changed object (judged there), or through a reference the signed revision made
      // to an object it did not define: a change that no redefined object betrays.
      const referrer = this.before.reach.dangling.get(num)
      if (referrer !== undefined)
        this.change('hidden', `${referrer} (through an object it referred to before it existed)`)
      return
    }
    const page = reach.pages.get(num)
    if (page !== undefined && reach.pages.get(num) === this.before.reach.pages.get(num)) {
      await this.judgePage(num, older, newer, page)
      return
    }
    const annotsOf = reach.annotsArrays.get(num)
    if (annotsOf !== undefined && this.before.reach.annotsArrays.get(num) === annotsOf) {
      await this.judgeAppended(
        Array.isArray(older.value) ? older.value : [],
        newer.value,
        `page ${annotsOf}'s list of annotations`,
        (item) => this.judgeNewAnnotation(item, annotsOf),
      )
      return
    }
    if (await this.isSigningOfEmptyField(older, newer)) return
    if (this.formDrawing && (await this.isDrawnWidget(older, newer))) return
    const used = reach.uses.get(num)
    if (!used) return
    const zones = new Set([...used.zones, ...(this.before.reach.uses.get(num)?.zones ?? [])])
    if ([...zones].every((zone) => UNSHOWN_ZONES.has(zone))) return
    if ([...zones].every((zone) => UNSHOWN_ZONES.has(zone) || METADATA_ZONES.has(zone))) {
      this.note(zoneText([...zones].find((zone) => METADATA_ZONES.has(zone))!))
      return
    }
    const zone = ZONE_ORDER.find((candidate) => zones.has(candidate)) ?? [...zones][0]!
    if (zone === PAGES_ZONE && zones.has('AcroForm') && used.roles.has('annotation')) {
      const pages = [...used.pages].sort((a, b) => a - b)
      this.change('form', `a form field on page ${pages[0]}, its value or its appearance${morePages(pages)}`, pages)
      return
    }
    if (zone === PAGES_ZONE) {
      const pages = [...used.pages].sort((a, b) => a - b)
      const role = ROLE_ORDER.find((candidate) => used.roles.has(candidate))
      this.change(kindOfRole(role), describeUse(zone, used.path, role, pages[0]) + morePages(pages), pages)
      return
    }
    this.change(kindOfZone(zone, used.path), zoneText(zone, used.path))
  }

  /** A page: only its /Annots may change, by signature widgets added at the end. */
  private async judgePage(num: number, older: IndirectObject, newer: IndirectObject, page: number): Promise<void> {
    const a = older.value
    const b = newer.value
    if (!isDict(a) || !isDict(b)) {
      this.change('page', `page ${page}`, [page])
      return
    }
    for (const key of new Set([...a.entries.keys(), ...b.entries.keys()])) {
      const x = a.get(key)
      const y = b.get(key)
      if (key === 'Annots') {
        if (y instanceof PdfRef) this.judged.add(y.num)
        const olderAnnots = await this.before.resolver.resolve(x)
        if (sameValue(x, y) && !this.objects.has((y as PdfRef | undefined)?.num ?? -1)) continue
        await this.judgeAppended(
          Array.isArray(olderAnnots) ? olderAnnots : [],
          await this.after.resolver.resolve(y),
          `page ${page}'s list of annotations`,
          (item) => this.judgeNewAnnotation(item, page),
        )
        continue
      }
      if (sameValue(x, y)) continue
      const role = key === 'Contents' ? 'content' : key === 'Resources' ? 'resources' : 'page'
      this.change(kindOfRole(role), describeUse(PAGES_ZONE, ['Pages', key], role, page), [page])
    }
    this.judged.add(num)
  }

  /** A widget of a field that is not a signature's, given its appearance and nothing else, while the form is drawn. */
  private async isDrawnWidget(older: IndirectObject, newer: IndirectObject): Promise<boolean> {
    const a = older.value
    const b = newer.value
    if (!isDict(a) || !isDict(b) || nameOf(b.get('Subtype')) !== 'Widget') return false
    if ((await this.fieldType(this.after, b)) === 'Sig') return false
    for (const key of new Set([...a.entries.keys(), ...b.entries.keys()])) {
      if (key !== 'AP' && !sameValue(a.get(key), b.get(key))) return false
    }
    return true
  }

  /** An empty signature field (or its widget) that this revision signs: it gains /V, and its appearance may change. */
  private async isSigningOfEmptyField(older: IndirectObject, newer: IndirectObject): Promise<boolean> {
    const a = older.value
    const b = newer.value
    if (!isDict(a) || !isDict(b) || a.get('V') !== undefined || !this.isNew(b.get('V'))) return false
    if ((await this.fieldType(this.after, b)) !== 'Sig' || !(await this.isSigned(b))) return false
    for (const key of new Set([...a.entries.keys(), ...b.entries.keys()])) {
      if (key !== 'V' && key !== 'AP' && !sameValue(a.get(key), b.get(key))) return false
    }
    return true
  }
}

function kindOfRole(role: string | undefined): ChangeKind {
  switch (role) {
    case 'content':
      return 'content'
    case 'resources':
      return 'resources'
    case 'annotation':
    case 'annots':
      return 'annotation'
    case 'page-tree':
      return 'page-tree'
    default:
      return 'page'
  }
}

function kindOfZone(zone: string, path: readonly string[]): ChangeKind {
  const keys = new Set(path)
  if (keys.has('JS') || keys.has('JavaScript')) return 'javascript'
  switch (zone) {
    case 'Pages':
      return 'page-tree'
    case 'AcroForm':
      return 'form'
    case 'OpenAction':
    case 'AA':
      return 'action'
    case 'Names':
      return keys.has('EmbeddedFiles') || keys.has('EF') ? 'embedded-file' : 'catalog'
    case 'Outlines':
      return 'outline'
    case 'OCProperties':
      return 'optional-content'
    default:
      return 'catalog'
  }
}

function morePages(pages: number[]): string {
  return pages.length > 1 ? ` (and ${pages.length - 1} other page${pages.length > 2 ? 's' : ''})` : ''
}

/** Two values alike as a reader reads them; references alike when they name the same object. */
export function sameValue(a: PdfValue | undefined, b: PdfValue | undefined): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined || a === null || b === null) return false
  if (a instanceof PdfRef) return b instanceof PdfRef && a.num === b.num && a.gen === b.gen
  if (a instanceof PdfName) return b instanceof PdfName && a.name === b.name
  if (a instanceof PdfString) return b instanceof PdfString && bytesEqual(a.bytes, b.bytes)
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameValue(item, b[i]))
  if (a instanceof PdfDict) {
    if (!(b instanceof PdfDict) || a.entries.size !== b.entries.size) return false
    for (const [key, value] of a.entries) if (!sameValue(value, b.get(key))) return false
    return true
  }
  return false
}

/** The object with its strings and stream data decrypted (an object at an offset is encrypted with its own key). */
function inClear(object: IndirectObject, opened: Pick<OpenedPdf, 'decryptString' | 'decryptStream'>): IndirectObject {
  const { num, gen } = object
  // What does not decrypt (a cross-reference stream, never encrypted) is compared as written.
  const attempt = (decrypt: typeof opened.decryptString, bytes: Uint8Array) => {
    try {
      return decrypt(bytes, num, gen)
    } catch {
      return bytes
    }
  }
  const clear = (value: PdfValue): PdfValue => {
    if (value instanceof PdfString) return new PdfString(attempt(opened.decryptString, value.bytes))
    if (Array.isArray(value)) return value.map(clear)
    if (value instanceof PdfDict)
      return new PdfDict(new Map([...value.entries].map(([key, item]) => [key, clear(item)])))
    return value
  }
  const stream = object.stream && {
    dict: clear(object.stream.dict) as PdfDict,
    data: attempt(opened.decryptStream, object.stream.data),
  }
  return { ...object, value: clear(object.value), stream }
}

function sameObject(a: IndirectObject, b: IndirectObject): boolean {
  if (!sameValue(a.value, b.value)) return false
  if (!a.stream || !b.stream) return a.stream === b.stream
  return bytesEqual(a.stream.data, b.stream.data)
}
