// A plain static host for the static build: index.html for every /v/<id>, files under /assets/, nothing else.
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

export interface StaticServer {
  url: string
  /** Serve files from this directory from now on. */
  setRoot(dir: string): void
  close(): Promise<void>
}

const TYPES: Record<string, string> = { js: 'text/javascript', css: 'text/css', html: 'text/html; charset=utf-8' }

export async function startStaticServer(): Promise<StaticServer> {
  let root: string | undefined
  const server: Server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname
    const file = /^\/v\/[^/]+$/.test(path) ? 'index.html' : /^\/assets\/[\w.-]+$/.test(path) ? path.slice(1) : undefined
    const body = file && root ? await readFile(join(root, file)).catch(() => undefined) : undefined
    if (!file || !body) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, {
      'content-type': TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
    })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    setRoot: (dir) => {
      root = dir
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
