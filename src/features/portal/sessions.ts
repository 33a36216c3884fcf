import { timingSafeEqual } from 'node:crypto';
import type { Exchange } from '../../http/core-types.js';
import { overTls } from '../../http/metered/pipeline.js';
import type { PortalStore, Session, SessionLife } from '../../store/store.js';
import { cookieOf, newCsrfToken, newToken, tokenHash, wellFormed } from './tokens.js';

export const COOKIE = 'fpg_session';
/** 24 h after its last use, and 7 days after it began at most. */
export const LIFE: SessionLife = { idleMs: 24 * 3_600_000, absoluteMs: 7 * 86_400_000 };

/** A signed-in request: its session, and the hash it is stored under (for sign-out). */
export interface SignedIn {
  session: Session;
  hash: string;
  /** The cookie's token itself (the store has only its hash): it opens what was sealed for this session. */
  token: string;
}

const attributes = (x: Exchange): string => `; Path=/portal; HttpOnly; SameSite=Lax${overTls(x) ? '; Secure' : ''}`;

/** Starts a session: its token, and the `Set-Cookie` header's value that carries it. */
export async function startSession(
  x: Exchange,
  store: PortalStore,
  email: string,
  accountId: string,
): Promise<{ token: string; cookie: string }> {
  const token = newToken('sess');
  await store.startSession(tokenHash(token), { email, account_id: accountId, csrf_token: newCsrfToken() }, LIFE);
  return { token, cookie: `${COOKIE}=${token}${attributes(x)}; Max-Age=${LIFE.absoluteMs / 1000}` };
}

/** The `Set-Cookie` value that drops the cookie. */
export const clearCookie = (x: Exchange): string => `${COOKIE}=${attributes(x)}; Max-Age=0`;

/** The request's session, its idle time started again; null without one that is still alive. */
export async function signedIn(x: Exchange, store: PortalStore): Promise<SignedIn | null> {
  const token = cookieOf(x.req.headers.cookie, COOKIE);
  if (token === undefined || !wellFormed(token)) return null;
  const hash = tokenHash(token);
  const session = await store.useSession(hash, LIFE);
  return session === null ? null : { session, hash, token };
}

/**
 * Whether a state-changing request may come from where it says: a browser names its page's
 * origin (`Origin`, `Sec-Fetch-Site`), which must be the portal's own. A request naming neither
 * is not a browser's (a script's, curl's): the CSRF token decides for those.
 */
export function sameOrigin(x: Exchange, baseUrl: string): boolean {
  const { headers } = x.req;
  if (headers['sec-fetch-site'] === 'cross-site') return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  return origin === requestOrigin(x) || (baseUrl !== '' && origin === new URL(baseUrl).origin);
}

/** The origin the request was sent to, as the browser sees it (its `Host`, over TLS or not). */
export const requestOrigin = (x: Exchange): string => `${overTls(x) ? 'https' : 'http'}://${x.req.headers.host ?? ''}`;

/** Whether the request carries the session's CSRF token (header, or a form's field). */
export function csrfHolds(x: Exchange, session: Session, field: unknown): boolean {
  const header = x.req.headers['x-csrf-token'];
  const sent = typeof header === 'string' ? header : typeof field === 'string' ? field : '';
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrf_token);
  return a.length === b.length && timingSafeEqual(a, b);
}
