// The library's items and changes as the sync service receives them: validated, ids lower-cased.

export type LibraryKind = 'signature' | 'snippet'

export interface SignatureItem {
  id: string
  label: string
  base64Png: string
  /** ISO 8601 UTC with milliseconds: the client's last-write-wins clock. */
  updatedAt: string
  createdAt: string
}

export interface SnippetItem {
  id: string
  label: string
  text: string
  fontSize: number
  updatedAt: string
  createdAt: string
}

export interface ItemDeletion {
  id: string
  deletedAt: string
}

export interface KindChanges<T> {
  upsert?: T[] | undefined
  delete?: ItemDeletion[] | undefined
}

export interface LibraryChanges {
  signatures?: KindChanges<SignatureItem> | undefined
  snippets?: KindChanges<SnippetItem> | undefined
}

export interface SkippedChange {
  kind: LibraryKind
  id: string
  op: 'upsert' | 'delete'
  reason: 'stale'
}
