// Child process entry of the page build: bundles, and writes the files to stdout as one JSON line.
import { bundlePage } from './bundle-page.ts'

const { files } = await bundlePage()
process.stdout.write(
  `${JSON.stringify(files.map((file) => ({ ...file, body: Buffer.from(file.body).toString('base64') })))}\n`,
)
