// What every settings module is built from: the environment's type, the error that names bad variables, and the zod
// fields environment variables are read with (a blank value counts as unset).
import { z } from 'zod'

export type Env = Record<string, string | undefined>

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** What a settings module's fields parse into. */
export type EnvValues<Fields extends z.ZodRawShape> = z.output<z.ZodObject<Fields>>

export const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional()

export const integer = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback)

export const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1' || value === 'yes')

export const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  )

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}
