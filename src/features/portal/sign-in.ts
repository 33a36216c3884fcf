/**
 * Sign-in by emailed link (docs/portal.md): the request answers 202 at once for any address, the
 * same work done for a known and an unknown one after the answer; the link works once, for 15
 * minutes; following it signs the person in, and under `portal.signup: open` first makes an
 * account for a new address, with the person as its owner.
 */
import { createHash } from 'node:crypto';
import type { Exchange } from '../../http/core-types.js';
import { clientOf, failRetry } from '../../http/metered/pipeline.js';
import { emailSchema } from '../../keys/members.js';
import type { LinkContext, PortalContext } from './context.js';
import { holdFirstKey } from './first-key.js';
import { empty, html, isForm, json, readBody, refuse } from './http.js';
import { linkSentPage, signUpWaitingPage } from './pages.js';
import { sameOrigin, startSession } from './sessions.js';
import { newToken, tokenHash, wellFormed } from './tokens.js';

const LINK_TTL_MS = 15 * 60_000;
const LINKS_PER_HOUR = 5;

/** The invalid-key throttle's count for sign-in requests of an address: its rule, apart from its keys. */
export const throttled = (address: string): string => `sign-in ${address}`;

export async function signIn(x: Exchange, c: PortalContext): Promise<void> {
  const { throttle, log } = x.services;
  const who = throttled(clientOf(x));
  const blockedMs = throttle.blockedFor(who);
  if (blockedMs > 0) return failRetry(x, 'throttled', Math.ceil(blockedMs / 1000));
  if (!sameOrigin(x, c.config.base_url)) return refuse(x, 'forbidden');
  const body = await readBody(x);
  const email = emailSchema.safeParse(body?.['email']);
  if (!email.success) return refuse(x, 'bad_request');
  throttle.fail(who);
  if (isForm(x.req)) html(x, 202, linkSentPage());
  else json(x, 202, { success: true });
  // After the answer: how long the store and the mail take says nothing about the address.
  issue(c, email.data).catch((err: unknown) => log.warn({ err }, 'portal: a sign-in link could not be sent'));
}

/**
 * Counts, makes and sends a link (also for an address an operator approved). Under `invite`, an
 * address that belongs to no account gets none: only the people an operator added sign in.
 */
export async function issue(c: LinkContext, email: string): Promise<void> {
  const { store, send } = c.deps;
  if (!(await store.countLink(email, LINKS_PER_HOUR, 3_600_000))) return;
  if (c.config.signup === 'invite' && (await firstAccount(c, email)) === null) return;
  const token = newToken('link');
  await store.putSignInToken(tokenHash(token), email, LINK_TTL_MS);
  await send(email, `${c.baseUrl()}/portal/auth?token=${token}`);
}

/** `GET /portal/auth?token=…`: the session cookie and 303 to /portal/, or 400 setting nothing. */
export async function followLink(x: Exchange, c: PortalContext, search: string): Promise<void> {
  const token = new URLSearchParams(search).get('token');
  if (token === null || !wellFormed(token)) return refuse(x, 'invalid_link');
  const { store, accounts } = c.deps;
  const email = await store.takeSignInToken(tokenHash(token));
  if (email === null) return refuse(x, 'invalid_link');
  let accountId = await firstAccount(c, email);
  let firstKey: string | null = null;
  if (accountId === null) {
    if (c.config.signup === 'approval') return waitForApproval(x, c, email);
    if (c.config.signup !== 'open') return refuse(x, 'forbidden');
    const made = await accounts.signUp(c.config.signup_plan, `portal:${email}`);
    [accountId, firstKey] = [made.id, made.api_key];
    const addedAt = new Date(x.services.clock.now()).toISOString();
    await store.addMember({ account_id: accountId, email, role: 'owner', added_at: addedAt });
  }
  await store.markSignIn(accountId, email, new Date(x.services.clock.now()).toISOString());
  const session = await startSession(x, store, email, accountId);
  if (firstKey !== null) await holdFirstKey(store, session.token, firstKey);
  empty(x, 303, ['Location', '/portal/', 'Set-Cookie', session.cookie]);
}

/**
 * `approval`: a new address's link files a sign-up (once: its id is named by the address) for an
 * operator, and signs nobody in. The approval makes the account and sends a new link.
 */
async function waitForApproval(x: Exchange, c: PortalContext, email: string): Promise<void> {
  const id = `signup_${createHash('sha256').update(email).digest('hex').slice(0, 24)}`;
  const requestedAt = new Date(x.services.clock.now()).toISOString();
  await c.deps.store.addSignUp({ id, email, requested_at: requestedAt });
  html(x, 202, signUpWaitingPage());
}

/** The first account the address belongs to that still exists. */
export async function firstAccount(c: LinkContext, email: string): Promise<string | null> {
  for (const m of await c.deps.store.memberships(email))
    if ((await c.deps.accounts.find(m.account_id)) !== null) return m.account_id;
  return null;
}
