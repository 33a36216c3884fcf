/** The `portal` section of the config: the customer portal on the public listener (docs/portal.md). */
import { z } from 'zod';

export const portal = z.strictObject({
  enabled: z.boolean().describe('Serve the customer portal under /portal/ on the public listener'),
  base_url: z
    .string()
    .refine(
      (u) => u === '' || /^https?:\/\/[^/?#]+\/?$/.test(u),
      'expected an http(s) origin such as https://api.example.com',
    )
    .describe(
      "The portal's public URL, for the links in emails (https://api.example.com); empty: the public listener's own address",
    ),
  signup: z
    .enum(['open', 'approval', 'invite'])
    .describe(
      'open: a new address that follows its sign-in link gets an account; approval and invite: not yet (such a link signs in members only)',
    ),
  signup_plan: z.string().min(1).describe('The plan of an account made by a portal sign-up'),
  upgrade_url: z.string().describe('Where the portal\'s "Upgrade" links (empty: no link)'),
  webhooks: z.strictObject({
    allow_private_addresses: z
      .boolean()
      .describe(
        "Let endpoints made in the portal reach loopback, private, link-local and metadata addresses (checked when made and at every delivery); webhooks.allow_private_addresses never applies to them, as a customer would read the answers in the portal's delivery log",
      ),
  }),
  smtp: z.strictObject({
    url: z
      .string()
      .describe(
        'SMTP server for the sign-in links, smtp://user:pass@host:587 or smtps:// (env SMTP_URL); empty: links are written to the log',
      ),
    from: z.string().min(3).describe('The sender of the sign-in emails'),
  }),
});

export type PortalConfig = z.infer<typeof portal>;
