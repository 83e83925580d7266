// Anyone may anchor with another's transaction as previousTxHash, as a countersigner must (issue 38, item 8). Anchors
// made before the real countersignature fill the VERIFY_MAX_SUCCESSORS a verification lists; the real one is then
// counted in `moreSuccessors` and listed by `GET /api/verify/:txHash/successors?offset=`, checked on chain like the
// rest, never dropped in silence. The verification page says how many more there are and shows them on request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { anchorChain, indexAnchors, type TestAnchor } from './helpers/anchors.ts'

describe('successors past the ones a verification lists', () => {
  let t: TestApp
  let root!: TestAnchor
  let spam: TestAnchor[]
  let real!: TestAnchor

  beforeAll(async () => {
    t = await createTestApp({ env: { VERIFY_MAX_SUCCESSORS: '2' } })
    root = (await anchorChain(t.testChain, 1))[0]!
    await indexAnchors(t.database.handle.db, t.testChain, [root])
    // Three anchors after the document, relayed before its real countersignature.
    spam = []
    for (let i = 0; i < 3; i++) {
      const [anchor] = await anchorChain(t.testChain, 1, { previousTxHash: root.txHash })
      await indexAnchors(t.database.handle.db, t.testChain, [anchor!])
      spam.push(anchor!)
    }
    real = (await anchorChain(t.testChain, 1, { previousTxHash: root.txHash }))[0]!
    await indexAnchors(t.database.handle.db, t.testChain, [real])
  }, 60_000)
  afterAll(async () => t?.close())

  const get = async (url: string) => {
    const response = await t.app.inject({ method: 'GET', url })
    return { status: response.statusCode, body: response.json() }
  }

  it('lists the first ones relayed and counts the rest, the real countersignature among them', async () => {
    const { status, body } = await get(`/api/verify/${root.txHash}`)
    expect(status).toBe(200)
    expect(body.successors.map((entry: { txHash: string }) => entry.txHash)).toEqual(
      spam.slice(0, 2).map((anchor) => anchor.txHash),
    )
    expect(body.moreSuccessors).toBe(2)
  })

  it('pages through the rest, each checked on chain, until there is none', async () => {
    const first = await get(`/api/verify/${root.txHash}/successors?offset=2`)
    expect(first.status).toBe(200)
    expect(first.body.successors.map((entry: { txHash: string }) => entry.txHash)).toEqual([
      spam[2]!.txHash,
      real.txHash,
    ])
    expect(first.body.successors[1]).toMatchObject({ previousTxHash: root.txHash, compositeHash: real.compositeHash })
    expect(first.body.nextOffset).toBe(4)
    const last = await get(`/api/verify/${root.txHash}/successors?offset=4`)
    expect(last.body).toEqual({ successors: [], nextOffset: null })
    expect((await get(`/api/verify/${root.txHash}/successors?offset=-1`)).status).toBe(400)
    expect((await get(`/api/verify/${root.txHash}/successors`)).status).toBe(400)
  })

  it('counts none more when every successor is listed', async () => {
    const { body } = await get(`/api/verify/${real.txHash}`)
    expect(body.successors).toEqual([])
    expect(body.moreSuccessors).toBe(0)
  })
})
