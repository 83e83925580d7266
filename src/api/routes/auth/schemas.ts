// Shapes shared by the sign-in routes (see ../shared/API.md, Authentication).
import { z } from 'zod'

export const UserSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string().nullable(),
  authProvider: z.string().describe('email, google or microsoft: how the account last signed in with a provider'),
  plan: z.string(),
})

export const SignInResponseSchema = z.object({
  token: z.string().describe('HS256 JWT; send it as `Authorization: Bearer <token>`'),
  expiresAt: z.iso.datetime(),
  user: UserSchema,
})

export const EmailSchema = z.email().max(254).describe('Compared case-insensitively')
