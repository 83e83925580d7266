// The service's identity attestation, from POST /api/relay with a salt to GET /api/verify/:txHash, on anvil.

import { Writable } from 'node:stream'
import { identityCommitment } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { count, newBody, postRelay, query, randomHash } from './relay-helpers.ts'

const salt = () => randomHash().slice(2)

describe('POST /api/relay with a salt', () => {
  let t: TestApp
  let mallory: SignedInUser
  let grace: SignedInUser
  const logLines: string[] = []

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk))
        done()
      },
    })
    t = await createTestApp({
      env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' },
      logger: pino({ level: 'trace' }, sink) as FastifyBaseLogger,
    })
    mallory = await signInTestUser(t, 'Mallory@Example.com')
    grace = await signInTestUser(t, 'grace@navy.example', 'google')
  })
  afterAll(async () => t?.close())

  const verify = async (txHash: string) => {
    const response = await t.app.inject({ method: 'GET', url: `/api/verify/${txHash}` })
    expect(response.statusCode).toBe(200)
    return response.json()
  }

  it('stores the attestation of the account and session, and forgets the salt', async () => {
    const body = { ...newBody(), salt: salt().toUpperCase() }
    const response = await postRelay(t.app, grace.headers, body)
    expect(response.statusCode).toBe(201)
    const [row] = await query(
      t.database.handle.db,
      sql`SELECT * FROM anchors WHERE tx_hash = ${response.json().txHash}`,
    )
    expect(row).toMatchObject({
      identity_commitment: await identityCommitment('grace@navy.example', body.salt),
      attested_trust: 'google',
      attested_verified: true,
    })
    for (const value of Object.values(row!)) expect(String(value).toLowerCase()).not.toContain(body.salt.toLowerCase())
    // The log did record the request, so its silence about the salt means something.
    expect(logLines.join('')).toContain('"url":"/api/relay"')
    expect(logLines.join('').toLowerCase()).not.toContain(body.salt.toLowerCase())
  })

  it('commits to the lower-cased e-mail of the account', async () => {
    const body = { ...newBody(), salt: salt() }
    const { txHash } = (await postRelay(t.app, mallory.headers, body)).json()
    expect((await verify(txHash)).attestation).toEqual({
      trust: 'email',
      verified: true,
      identityCommitment: await identityCommitment('mallory@example.com', body.salt),
    })
  })

  it('attests nothing for a relay without salt (older clients keep working)', async () => {
    const response = await postRelay(t.app, mallory.headers, newBody())
    expect(response.statusCode).toBe(201)
    const [row] = await query(
      t.database.handle.db,
      sql`SELECT * FROM anchors WHERE tx_hash = ${response.json().txHash}`,
    )
    expect(row).toMatchObject({ identity_commitment: null, attested_trust: null, attested_verified: null })
    expect((await verify(response.json().txHash)).attestation).toBeNull()
  })

  it('answers a repeat with the same salt, or with none, with the anchor as it is', async () => {
    const body = { ...newBody(), salt: salt() }
    const first = await postRelay(t.app, mallory.headers, body)
    expect(first.statusCode).toBe(201)
    const { salt: _, ...withoutSalt } = body
    for (const repeat of [body, withoutSalt]) {
      const again = await postRelay(t.app, mallory.headers, repeat)
      expect(again.statusCode).toBe(200)
      expect(again.json()).toEqual(first.json())
    }
    expect((await verify(first.json().txHash)).attestation.identityCommitment).toBe(
      await identityCommitment('mallory@example.com', body.salt),
    )
  })

  it('returns 409 for a repeat with another salt, or a salt for an anchor relayed without one', async () => {
    const attested = { ...newBody(), salt: salt() }
    expect((await postRelay(t.app, mallory.headers, attested)).statusCode).toBe(201)
    const unattested = newBody()
    const first = await postRelay(t.app, mallory.headers, unattested)
    expect(first.statusCode).toBe(201)
    const anchorsBefore = await count(t.database.handle.db, 'anchors')
    for (const variant of [
      { ...attested, salt: salt() },
      { ...unattested, salt: salt() },
    ]) {
      const response = await postRelay(t.app, mallory.headers, variant)
      expect(response.statusCode).toBe(409)
      expect(response.json().code).toBe('ANCHOR_CONFLICT')
    }
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchorsBefore)
    expect((await verify(first.json().txHash)).attestation).toBeNull()
  })

  it('rejects a salt that is not 64 hex digits with 400 and writes nothing', async () => {
    const before = await count(t.database.handle.db, 'anchors')
    for (const bad of ['ab'.repeat(31), `${'ab'.repeat(31)}zz`, 42, '']) {
      const response = await postRelay(t.app, mallory.headers, { ...newBody(), salt: bad })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors).toEqual([expect.objectContaining({ path: 'salt' })])
    }
    expect(await count(t.database.handle.db, 'anchors')).toBe(before)
  })

  it('returns the attestation of every chain entry it knows: a chain mixing attested and unattested anchors', async () => {
    const firstSalt = salt()
    const first = (await postRelay(t.app, grace.headers, { ...newBody(), salt: firstSalt })).json()
    const second = (await postRelay(t.app, mallory.headers, newBody(first.txHash))).json()
    const thirdSalt = salt()
    const third = (await postRelay(t.app, mallory.headers, { ...newBody(second.txHash), salt: thirdSalt })).json()

    const answer = await verify(third.txHash)
    const graceAttestation = {
      trust: 'google',
      verified: true,
      identityCommitment: await identityCommitment('grace@navy.example', firstSalt),
    }
    const malloryAttestation = {
      trust: 'email',
      verified: true,
      identityCommitment: await identityCommitment('mallory@example.com', thirdSalt),
    }
    expect(answer.chain.map((entry: { attestation: unknown }) => entry.attestation)).toEqual([
      graceAttestation,
      null,
      malloryAttestation,
    ])
    expect(answer.attestation).toEqual(malloryAttestation)
    expect((await verify(first.txHash)).successors).toEqual([expect.objectContaining({ attestation: null })])
  })
})
