// Test PDFs made by qpdf and the system tools that judge the results (qpdf, poppler, MuPDF, zbar): Node only.

import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'anchor-pdf-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Runs qpdf on `input` with `args` and returns the output file. */
export function qpdfTransform(input: Uint8Array, args: string[]): Promise<Uint8Array> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'in.pdf'), input)
    await run('qpdf', [...args, join(dir, 'in.pdf'), join(dir, 'out.pdf')])
    return new Uint8Array(await readFile(join(dir, 'out.pdf')))
  })
}

/** `qpdf --check`: resolves with its output when the file passes, throws with it when not. */
export function qpdfCheck(pdf: Uint8Array, args: string[] = []): Promise<string> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'f.pdf'), pdf)
    const { stdout, stderr } = await run('qpdf', [...args, '--check', join(dir, 'f.pdf')])
    return stdout + stderr
  })
}

/** The warnings `qpdf --check` prints for a file it reads anyway (a damaged table it reconstructs), file name aside. */
export function qpdfWarnings(pdf: Uint8Array): Promise<string[]> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'f.pdf'), pdf)
    const output = await run('qpdf', ['--check', join(dir, 'f.pdf')]).then(
      ({ stdout, stderr }) => stdout + stderr,
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    )
    return output
      .split('\n')
      .filter((line) => line.startsWith('WARNING'))
      .map((line) => line.replace(join(dir, 'f.pdf'), 'f.pdf'))
  })
}

/** Renders one page (its media box, or with `cropbox` the visible box) to `dir`/page.png with pdftoppm. */
export async function renderPage(
  dir: string,
  pdf: Uint8Array,
  page: number,
  options: { cropbox?: boolean; dpi?: number } = {},
) {
  const pdfFile = join(dir, 'f.pdf')
  await writeFile(pdfFile, pdf)
  const p = String(page)
  const box = options.cropbox ? ['-cropbox'] : []
  await run('pdftoppm', [
    '-r',
    String(options.dpi ?? 150),
    '-gray',
    '-png',
    ...box,
    '-f',
    p,
    '-l',
    p,
    '-singlefile',
    pdfFile,
    join(dir, 'page'),
  ])
  return join(dir, 'page.png')
}

/**
 * Renders one page with pdftoppm (poppler), or with `renderer: 'mutool'` MuPDF, at `dpi` (150 unless given), and
 * decodes every QR code on it with zbarimg.
 */
export function scanQrCodes(
  pdf: Uint8Array,
  page = 1,
  { dpi = 150, renderer = 'pdftoppm' }: { dpi?: number; renderer?: 'pdftoppm' | 'mutool' } = {},
): Promise<string[]> {
  return withTempDir(async (dir) => {
    if (renderer === 'pdftoppm') await renderPage(dir, pdf, page, { dpi })
    else {
      await writeFile(join(dir, 'f.pdf'), pdf)
      await run('mutool', [
        'draw',
        '-q',
        '-r',
        String(dpi),
        '-c',
        'gray',
        '-o',
        join(dir, 'page.png'),
        join(dir, 'f.pdf'),
        String(page),
      ])
    }
    try {
      const { stdout } = await run('zbarimg', [
        '--quiet',
        '--raw',
        '-Sdisable',
        '-Sqrcode.enable',
        join(dir, 'page.png'),
      ])
      return stdout.split('\n').filter((line) => line !== '')
    } catch (error) {
      // zbarimg exits 4 when it finds no code.
      if ((error as { code?: number }).code === 4) return []
      throw error
    }
  })
}

/**
 * What MuPDF says while it draws every page of `pdf` (`mutool draw`): its errors and warnings, such as the repair of
 * a cross-reference table it could not follow. Throws when it cannot open the file at all.
 */
export function mutoolComplaints(pdf: Uint8Array): Promise<string[]> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'f.pdf'), pdf)
    const { stdout, stderr } = await run('mutool', ['draw', '-q', '-o', join(dir, 'page-%d.png'), join(dir, 'f.pdf')])
    // A build of MuPDF without colour management says so of every file: not about the file.
    return `${stdout}${stderr}`
      .split('\n')
      .filter((line) => /^(error|warning)/.test(line) && !line.includes('ICC support is not available'))
  })
}
