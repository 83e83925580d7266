// A SoftHSM2 token in a temporary directory, with secp256k1 key pairs made on it by pkcs11-tool (as an operator
// would), and a PKCS#11 module that hangs C_Sign on demand (fixtures/hanging-pkcs11.c, compiled with gcc).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so'
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

export interface SoftHsmToken {
  dir: string
  tokenLabel: string
  pin: string
  /** The variables the token library needs: every process that opens the token gets them. */
  env: Record<string, string>
  addKey(label: string, keyType?: string): void
  /** A module that delegates to SoftHSM2 but blocks C_Sign while `flagFile` exists. */
  hangingModule(): { module: string; flagFile: string; env: Record<string, string> }
  remove(): void
}

export function createSoftHsmToken(tokenLabel = 'relayers', pin = '246810'): SoftHsmToken {
  const dir = mkdtempSync(join(tmpdir(), 'softhsm-'))
  const conf = join(dir, 'softhsm2.conf')
  execFileSync('mkdir', ['-p', join(dir, 'tokens')])
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\n`)
  const env = { SOFTHSM2_CONF: conf }
  const run = (command: string, args: string[]) =>
    execFileSync(command, args, { env: { ...process.env, ...env }, stdio: 'pipe' })
  run('softhsm2-util', ['--init-token', '--free', '--label', tokenLabel, '--pin', pin, '--so-pin', `${pin}0`])
  return {
    dir,
    tokenLabel,
    pin,
    env,
    addKey(label, keyType = 'EC:secp256k1') {
      run('pkcs11-tool', [
        ...['--module', SOFTHSM_MODULE, '--token-label', tokenLabel, '--login', '--pin', pin],
        ...['--keypairgen', '--key-type', keyType, '--label', label],
      ])
    },
    hangingModule() {
      const module = join(dir, 'hanging-pkcs11.so')
      if (!existsSync(module)) {
        const source = join(ROOT, 'test/relay/fixtures/hanging-pkcs11.c')
        run('gcc', ['-shared', '-fPIC', '-I', join(ROOT, 'node_modules/pkcs11js/includes'), source, '-o', module])
      }
      const flagFile = join(dir, 'hang')
      return { module, flagFile, env: { HANGING_PKCS11_FLAG: flagFile, HANGING_PKCS11_TARGET: SOFTHSM_MODULE } }
    },
    remove() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
