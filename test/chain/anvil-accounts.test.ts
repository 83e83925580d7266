// The development accounts are anvil's own: the keys derived here are the ones anvil funds.
import { mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { ANVIL_ACCOUNT_COUNT, ANVIL_MNEMONIC, anvilAccount } from '../../src/chain/anvil-accounts.ts'

describe('anvilAccount', () => {
  it("derives anvil's well-known first accounts", () => {
    expect(anvilAccount(0).address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    expect(anvilAccount(1).address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
  })

  it("derives every account as viem's mnemonic accounts do", () => {
    for (let index = 0; index < ANVIL_ACCOUNT_COUNT; index++) {
      expect(anvilAccount(index).address).toBe(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index }).address)
    }
  })

  it('refuses an account anvil does not fund', () => {
    expect(() => anvilAccount(ANVIL_ACCOUNT_COUNT)).toThrow(/anvil funds accounts 0 to 9/)
  })
})
