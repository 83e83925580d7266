// The verification page's HTML and Content-Security-Policy, shared by the service (GET /v/:id) and the static build.
// The markup already shows the loading state and the PDF form, so the first paint needs no script.

export interface PageHtmlOptions {
  /** Relative to the page at `{base}/v/{id}`, e.g. `../assets/main-AB12CD.js`, so any path prefix works. */
  scriptHref: string
  styleHref: string
  /** '' to call the API on the page's own origin, or an absolute URL without a trailing slash. */
  apiBase: string
  /** Put into a `<meta http-equiv>` for static hosting, where no header can be set. */
  metaContentSecurityPolicy?: string
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!)
}

/**
 * `script-src 'self'` and no inline code anywhere; `connect-src` lists only the API. Assets come from the page's
 * own origin. `frame-ancestors` keeps the page out of frames that could dress it up (ignored in a meta tag).
 */
export function contentSecurityPolicy(apiBase: string, options: { forMeta?: boolean } = {}): string {
  const api = apiBase === '' ? '' : ` ${new URL(apiBase).origin}`
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${api}`,
    "base-uri 'none'",
    "form-action 'none'",
    ...(options.forMeta ? [] : ["frame-ancestors 'none'"]),
  ].join('; ')
}

export function renderPageHtml(options: PageHtmlOptions): string {
  const csp = options.metaContentSecurityPolicy
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${csp ? `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">\n` : ''}<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<meta name="api-base" content="${escapeHtml(options.apiBase)}">
<title>Signature check</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(options.styleHref)}">
<script type="module" src="${escapeHtml(options.scriptHref)}"></script>
</head>
<body>
<a class="skip" href="#main">Skip to the result</a>
<header class="site"><p class="brand">Document signature check</p></header>
<main id="main">
<div id="verdict-slot">
<section id="verdict" class="verdict tone-loading" role="status" aria-busy="true">
<h1>Checking this signature…</h1>
<p>Reading the record on the blockchain and decrypting the signer’s details on this device.</p>
<noscript><p>This page needs JavaScript: the signer’s details are decrypted in your browser, with the key in the link, so that no server ever sees them.</p></noscript>
</section>
</div>
<div id="details"></div>
<section id="pdf-check" class="card" aria-labelledby="pdf-title">
<h2 id="pdf-title">Check the PDF itself</h2>
<p>Choose or drop the signed PDF to check every signature in it against the document’s bytes. The file is read on this device and never uploaded.</p>
<div class="dropzone">
<input type="file" id="pdf-file" accept="application/pdf,.pdf">
<label for="pdf-file">Choose the signed PDF</label>
<p>or drop it anywhere on this page</p>
</div>
<div class="pdf-result" role="status" aria-live="polite"></div>
</section>
</main>
<footer class="foot">
<p>The key that opens the signer’s details is the part of the link after the # sign. Your browser never sends it to any server: the details are decrypted on this device and compared with the record on the blockchain.</p>
</footer>
</body>
</html>
`
}
