/** A member's input, read alike by the portal's own routes and the operators' (admin API, CLI). */
import { z } from 'zod';

/** An email address, lower case: one person, one spelling. */
export const emailSchema = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .transform((e) => e.toLowerCase());

/** `{email, role}`: a member added without a role is a developer (an owner is named as such). */
export const memberInput = z.strictObject({
  email: emailSchema,
  role: z.enum(['owner', 'developer']).default('developer'),
});
export type MemberInput = z.infer<typeof memberInput>;
