// `anchor pin` trusts nothing a service says without checking it, and one bad entry in the pins file never makes the
// other pins unusable.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAnchor } from './helpers/run-anchor.ts'

const CONTRACT = '0x5fbdb2315678afecb367f032d93f642f64180aa3'

describe('anchor pin', () => {
  let dir: string
  let liar: Server
  let liarUrl: string
  /** What the lying service's /api/info answers. */
  let info: Record<string, unknown>

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'anchor-pin-'))
    liar = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(info))
    })
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve))
    liarUrl = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((resolve) => liar?.close(resolve))
    await rm(dir, { recursive: true, force: true })
  })

  const honestInfo = {
    chainId: 31337,
    contractAddress: CONTRACT,
    relayers: ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8'],
    publicRpcUrl: null,
    explorerTxUrl: null,
    verifyBaseUrl: 'https://verify.example',
    pdfSigning: {
      certificates: ['-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIQ\n-----END CERTIFICATE-----\n'],
      ocspUrl: 'https://anchors.example/ca/ocsp',
      crlUrl: 'https://anchors.example/ca/crl',
      timestampCertificates: [],
    },
    version: '1.0.0',
  }

  it('refuses what a service says that is no chain id, no contract address or no certificate, and writes nothing', async () => {
    const home = join(dir, 'lied-to')
    for (const lie of [
      { ...honestInfo, chainId: -7 },
      { ...honestInfo, chainId: 0 },
      { ...honestInfo, chainId: 2 ** 60 },
      { ...honestInfo, contractAddress: `${CONTRACT}\u001b[2K` },
      { ...honestInfo, contractAddress: 'not an address' },
      { ...honestInfo, pdfSigning: { ...honestInfo.pdfSigning, certificates: ['<script>'] } },
    ]) {
      info = lie
      const run = await runAnchor(['pin', '--from-service', '--service', liarUrl], { XDG_CONFIG_HOME: home })
      expect(run.code).not.toBe(0)
      expect(run.stderr).toContain('does not have the documented shape')
      expect(run.stderr).not.toContain('\u001b')
      await expect(readFile(join(home, 'anchor', 'pins.json'))).rejects.toThrow()
    }
    info = honestInfo
    const run = await runAnchor(['pin', '--from-service', '--service', liarUrl], { XDG_CONFIG_HOME: home })
    expect(run).toMatchObject({ code: 0, stdout: `Pinned ${CONTRACT} on chain 31337.\n` })
  })

  it('ignores one damaged entry of the pins file, says so, and keeps the others usable', async () => {
    const home = join(dir, 'hand-edited')
    const file = join(home, 'anchor', 'pins.json')
    await runAnchor(['pin', CONTRACT, '--chain-id', '31337'], { XDG_CONFIG_HOME: home })
    const { pins } = JSON.parse(await readFile(file, 'utf8'))
    const damaged = { chainId: -7, contract: '0x\u001b[2K', source: 'service x', pinnedAt: 'now' }
    await writeFile(file, JSON.stringify({ pins: [damaged, ...pins, { chainId: 1 }] }))

    const list = await runAnchor(['pin', '--list'], { XDG_CONFIG_HOME: home })
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(new RegExp(`^${CONTRACT} on chain 31337 \\(by hand, `))
    expect(list.stderr).toContain(`note: 2 entries of ${file} are not a valid pin and were ignored`)
    // The next write keeps only the valid pins.
    const more = await runAnchor(['pin', `0x${'1'.repeat(40)}`, '--chain-id', '5'], { XDG_CONFIG_HOME: home })
    expect(more.code).toBe(0)
    expect(JSON.parse(await readFile(file, 'utf8')).pins.map((pin: { chainId: number }) => pin.chainId)).toEqual([
      31337, 5,
    ])
  })

  it('still calls a file that is not a list of pins damaged', async () => {
    const home = join(dir, 'broken')
    await runAnchor(['pin', CONTRACT, '--chain-id', '31337'], { XDG_CONFIG_HOME: home })
    await writeFile(join(home, 'anchor', 'pins.json'), '{"pins": "everything"}')
    const run = await runAnchor(['pin', '--list'], { XDG_CONFIG_HOME: home })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('is damaged: fix or delete it')
  })
})
