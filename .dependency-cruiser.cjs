// The import rules CI checks (`npm run check:imports`): no circle of value imports, and no import from a lower layer
// into a higher one. docs/architecture.md draws the layers; a module's layer is its directory under src/.
const FOUNDATION = '^src/(version|logging|owner-only-files)\\.ts$|^src/config/|^src/precompiled-builds\\.js$'
const INFRASTRUCTURE = '^src/(db|chain|pkcs11|embedded)/|^src/redis-[^/]+\\.ts$'
const DOMAIN = '^src/(accounts|auth|events|library|pdf-signing|relayer|verify|web)/'
const API = '^src/api/'
const ENTRY = '^src/(server|service)\\.ts$|^src/operator/'
const SERVICE = '^src/'

const layerRule = (name, from, above) => ({
  name,
  comment: 'A lower layer never imports a higher one (docs/architecture.md).',
  severity: 'error',
  from: { path: from },
  to: { path: above },
})

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A circle of value imports makes the load order decide what is defined.',
      severity: 'error',
      from: { path: '^(src|packages/[^/]+/src)/' },
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    layerRule('foundation-imports-up', FOUNDATION, `${INFRASTRUCTURE}|${DOMAIN}|${API}|${ENTRY}`),
    layerRule('infrastructure-imports-up', INFRASTRUCTURE, `${DOMAIN}|${API}|${ENTRY}`),
    layerRule('domain-imports-up', DOMAIN, `${API}|${ENTRY}`),
    layerRule('api-imports-up', API, ENTRY),
    // The packages stand alone: the client under everything, the CLI on the client only.
    layerRule('client-imports-up', '^packages/client/src/', `${SERVICE}|^packages/cli/`),
    layerRule('cli-imports-service', '^packages/cli/src/', SERVICE),
    {
      name: 'service-imports-entry-points',
      comment: 'Nothing under src/ imports bin/ (the entry points, which import src/precompiled-builds.js).',
      severity: 'error',
      from: { path: SERVICE },
      to: { path: '^bin/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
