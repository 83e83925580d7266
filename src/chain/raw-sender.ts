// Sends signed transactions to the RPC URLs in turn until one gives a definite answer, each exactly once per URL: a
// transport retry would hide the first attempt's outcome (the node may hold a transaction whose answer was lost, and a
// re-send then meets "nonce too low" or a refused connection that says nothing of the first). Several transactions go
// as one JSON-RPC batch, in the order given: nodes take a batch's calls in order (anvil, Hardhat, Ganache, geth), so a
// key's consecutive nonces reach the node in one round trip and still in nonce order.

export type SendAnswer =
  /** The node took it: its hash came back. */
  | { kind: 'accepted' }
  /** The node answered with a JSON-RPC error: its code and its own words. */
  | { kind: 'refused'; code: number; message: string }
  /** No answer that says what became of it: a timeout, a dropped or refused connection, an HTTP error, not JSON. */
  | { kind: 'unclear'; reason: string }

export interface RawSendResult {
  /** The first definite answer; the last unclear one when no URL gave one. */
  answer: SendAnswer
  /** An earlier URL's attempt was unclear: it may have delivered the transaction, whatever the later answer says. */
  unclearBefore: boolean
}

/** One result per transaction, in the order given. */
export type RawSender = (raws: readonly `0x${string}`[]) => Promise<RawSendResult[]>

/** Most transactions in one batch request: well under every provider's batch limit. */
const MAX_BATCH = 20
/** HTTP statuses with which an endpoint says it takes no batches (then it gets one call per request). */
const BATCH_REFUSED = new Set([400, 404, 405, 413, 501])

export function createRawSender(options: { rpcUrls: readonly string[]; timeoutMs: number }): RawSender {
  const endpoints = options.rpcUrls.map((url) => ({ url, batches: true }))
  return async (raws) => {
    const results: RawSendResult[] = raws.map(() => ({
      answer: { kind: 'unclear', reason: 'no RPC URL' },
      unclearBefore: false,
    }))
    let open = raws.map((_, index) => index)
    for (const [attempt, endpoint] of endpoints.entries()) {
      const answers: SendAnswer[] = []
      for (let from = 0; from < open.length; from += MAX_BATCH) {
        const chunk = open.slice(from, from + MAX_BATCH).map((index) => raws[index]!)
        answers.push(...(await sendChunk(endpoint, chunk, options.timeoutMs)))
      }
      const stillOpen: number[] = []
      for (const [i, index] of open.entries()) {
        results[index] = { answer: answers[i]!, unclearBefore: attempt > 0 }
        if (answers[i]!.kind === 'unclear') stillOpen.push(index)
      }
      open = stillOpen
      if (open.length === 0) break
    }
    // Every URL was unclear: nothing definite came before the last answer.
    for (const index of open) results[index]!.unclearBefore = false
    return results
  }
}

async function sendChunk(
  endpoint: { url: string; batches: boolean },
  raws: readonly `0x${string}`[],
  timeoutMs: number,
): Promise<SendAnswer[]> {
  if (raws.length === 1 || !endpoint.batches) {
    const answers: SendAnswer[] = []
    for (const raw of raws) answers.push(await postOne(endpoint.url, raw, timeoutMs))
    return answers
  }
  const answers = await post(endpoint.url, raws, true, timeoutMs)
  if (answers !== BATCH_NOT_TAKEN) return answers
  // The endpoint takes no batches, and said so without taking any of the calls: one call per request from now on.
  endpoint.batches = false
  return sendChunk(endpoint, raws, timeoutMs)
}

const BATCH_NOT_TAKEN = Symbol('batch not taken')

async function postOne(url: string, raw: `0x${string}`, timeoutMs: number): Promise<SendAnswer> {
  const answers = await post(url, [raw], false, timeoutMs)
  // Only a batch is ever "not taken"; a single call has an answer of its own.
  return answers === BATCH_NOT_TAKEN ? { kind: 'unclear', reason: 'not taken' } : answers[0]!
}

async function post(
  url: string,
  raws: readonly `0x${string}`[],
  batch: boolean,
  timeoutMs: number,
): Promise<SendAnswer[] | typeof BATCH_NOT_TAKEN> {
  const calls = raws.map((raw, id) => ({ jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] }))
  const everyOne = (answer: SendAnswer) => raws.map(() => answer)
  let status: number
  let text: string
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(batch ? calls : calls[0]),
      signal: AbortSignal.timeout(timeoutMs),
    })
    status = response.status
    text = await response.text()
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? 'no answer within the timeout' : causeOf(error)
    return everyOne({ kind: 'unclear', reason: bounded(reason) })
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    if (batch && BATCH_REFUSED.has(status)) return BATCH_NOT_TAKEN
    // A gateway's or provider's status (429, 503, …) with the page it sent: nothing says the node never got it.
    return everyOne({ kind: 'unclear', reason: bounded(`HTTP ${status}: ${text}`) })
  }
  if (!batch) return [answerOf(body, status)]
  if (!Array.isArray(body)) {
    // One error for the whole batch: an endpoint that takes no batches (or a gateway's error in JSON).
    return batch && BATCH_REFUSED.has(status) ? BATCH_NOT_TAKEN : everyOne(answerOf(body, status))
  }
  const byId = new Map<unknown, unknown>(body.map((entry) => [(entry as { id?: unknown })?.id, entry]))
  return calls.map((call) =>
    byId.has(call.id) ? answerOf(byId.get(call.id), status) : { kind: 'unclear', reason: 'no answer to this call' },
  )
}

function answerOf(entry: unknown, status: number): SendAnswer {
  const { result, error } = (entry ?? {}) as { result?: unknown; error?: { code?: unknown; message?: unknown } }
  if (error && typeof error === 'object') {
    const code = typeof error.code === 'number' ? error.code : 0
    return { kind: 'refused', code, message: bounded(String(error.message ?? '')) }
  }
  if (status >= 200 && status < 300 && typeof result === 'string') return { kind: 'accepted' }
  return { kind: 'unclear', reason: bounded(`HTTP ${status}: ${JSON.stringify(entry)}`) }
}

/** The innermost words of a transport failure (ECONNREFUSED, socket hang up, …), never the URL. */
function causeOf(error: unknown): string {
  let current: unknown = error
  let words = 'the request failed'
  for (let depth = 0; current instanceof Error && depth < 10; depth++) {
    const code = (current as NodeJS.ErrnoException).code
    words = typeof code === 'string' ? `${code}: ${current.message}` : current.message
    current = current.cause
  }
  return words
}

/** Longest node text kept for logs and decisions: the words that matter come first. */
const MAX_REASON_CHARACTERS = 300

/**
 * A node's or transport's words as logs may carry them: URLs (whose path or query may hold a provider's key) and
 * long tokens removed, whitespace collapsed, bounded.
 */
export function bounded(text: string): string {
  const clean = text
    .replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>')
    .replace(/\b[A-Za-z0-9_-]{40,}\b/g, (token) => (/^0x[0-9a-fA-F]+$/.test(token) ? token : '<token>'))
    .replace(/\s+/g, ' ')
    .trim()
  return clean.length > MAX_REASON_CHARACTERS ? `${clean.slice(0, MAX_REASON_CHARACTERS)}…` : clean
}
