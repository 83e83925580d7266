// A module resolve hook that adds the `@docanchor/source` export condition, as `node --conditions` would: in a
// checkout @docanchor/client resolves to its TypeScript sources, and a bin script cannot pass Node flags.
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, '@docanchor/source'] })
}
