/**
 * `/portal/api/`: the JSON API the pages call (described in /portal/openapi.json). Every route
 * but sign-in needs a session; every state-changing one checks `Origin` and takes the CSRF token.
 */
import type { Exchange } from '../../http/core-types.js';
import type { Acting, ApiHandler } from './acting.js';
import { createKey, listKeys, patchKey, revokeKey, rotateKey, usage, usageCsv } from './api-keys.js';
import { addMember, listMembers, removeMember } from './api-members.js';
import { PASSKEY_ROUTES, SIGNED_OUT_ROUTES } from './api-passkeys.js';
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  replayDelivery,
  testWebhook,
  webhookDeliveries,
} from './api-webhooks.js';
import type { PortalContext } from './context.js';
import { empty, isForm, json, readBody, refuse } from './http.js';
import { manageBilling, startCheckout } from './plan-section.js';
import { clearCookie, csrfHolds, LIFE, sameOrigin, signedIn } from './sessions.js';
import { signIn } from './sign-in.js';

const me: ApiHandler = async (x, c, a) => json(x, 200, await whoAmI(c, a));

/** `GET /portal/api/me`'s body, also what the pages show. */
export async function whoAmI(c: PortalContext, a: Acting) {
  const account = await c.deps.accounts.find(a.accountId);
  const memberships = await c.deps.store.memberships(a.session.email);
  return {
    email: a.session.email,
    csrf_token: a.session.csrf_token,
    account: { id: a.accountId, plan: account?.plan ?? '', role: a.role },
    accounts: memberships.map((m) => ({ id: m.account_id, role: m.role })),
    upgrade_url: c.config.upgrade_url === '' ? null : c.config.upgrade_url,
  };
}

const signOut: ApiHandler = async (x, c, a) => {
  await c.deps.store.endSession(a.hash);
  gone(x);
};

const signOutEverywhere: ApiHandler = async (x, c, a) => {
  await c.deps.store.endSessions(a.session.email, LIFE);
  gone(x);
};

const switchAccount: ApiHandler = async (x, c, a, _p, body) => {
  const to = body['account_id'];
  const ours = (await c.deps.store.memberships(a.session.email)).find((m) => m.account_id === to);
  if (ours === undefined) return refuse(x, 'not_found');
  await c.deps.store.switchSession(a.hash, ours.account_id, LIFE);
  if (isForm(x.req)) return empty(x, 303, ['Location', '/portal/']);
  json(x, 200, { account: { id: ours.account_id, role: ours.role } });
};

function gone(x: Exchange): void {
  const cookie = ['Set-Cookie', clearCookie(x)];
  if (isForm(x.req)) return empty(x, 303, ['Location', '/portal/', ...cookie]);
  empty(x, 204, cookie);
}

interface ApiRoute {
  method: string;
  path: RegExp;
  run: ApiHandler;
}

const ID = '([A-Za-z0-9_-]{1,64})';
/** Forms cannot send DELETE: the pages post to `…/delete` instead. */
const ROUTES: readonly ApiRoute[] = [
  { method: 'GET', path: /^me$/, run: me },
  { method: 'POST', path: /^sign-out$/, run: signOut },
  { method: 'POST', path: /^sign-out-everywhere$/, run: signOutEverywhere },
  { method: 'POST', path: /^switch$/, run: switchAccount },
  { method: 'GET', path: /^keys$/, run: listKeys },
  { method: 'POST', path: /^keys$/, run: createKey },
  { method: 'POST', path: new RegExp(`^keys/${ID}/rotate$`), run: rotateKey },
  { method: 'PATCH', path: new RegExp(`^keys/${ID}$`), run: patchKey },
  { method: 'DELETE', path: new RegExp(`^keys/${ID}$`), run: revokeKey },
  { method: 'POST', path: new RegExp(`^keys/${ID}/delete$`), run: revokeKey },
  { method: 'GET', path: /^usage$/, run: usage },
  { method: 'GET', path: /^usage\.csv$/, run: usageCsv },
  { method: 'GET', path: /^members$/, run: listMembers },
  { method: 'POST', path: /^members$/, run: addMember },
  { method: 'DELETE', path: /^members\/([^/]{1,300})$/, run: removeMember },
  { method: 'POST', path: /^members\/([^/]{1,300})\/delete$/, run: removeMember },
  { method: 'GET', path: /^webhooks$/, run: listWebhooks },
  { method: 'POST', path: /^webhooks$/, run: createWebhook },
  { method: 'DELETE', path: new RegExp(`^webhooks/${ID}$`), run: deleteWebhook },
  { method: 'POST', path: new RegExp(`^webhooks/${ID}/delete$`), run: deleteWebhook },
  { method: 'POST', path: new RegExp(`^webhooks/${ID}/test$`), run: testWebhook },
  { method: 'GET', path: new RegExp(`^webhooks/${ID}/deliveries$`), run: webhookDeliveries },
  { method: 'POST', path: new RegExp(`^webhooks/${ID}/deliveries/${ID}/replay$`), run: replayDelivery },
  ...PASSKEY_ROUTES,
  { method: 'POST', path: /^billing\/checkout$/, run: startCheckout },
  { method: 'POST', path: /^billing\/manage$/, run: manageBilling },
];

/** Answers `/portal/api/<rest>`. */
export async function api(x: Exchange, c: PortalContext, rest: string): Promise<void> {
  const method = x.req.method === 'HEAD' ? 'GET' : (x.req.method ?? 'GET');
  if (rest === 'sign-in' && method === 'POST') return signIn(x, c);
  const signedOut = SIGNED_OUT_ROUTES[`${method} ${rest}`];
  if (signedOut !== undefined) return signedOut(x, c);
  let params: string[] = [];
  const route = ROUTES.find((r) => {
    const m = r.method === method ? r.path.exec(rest) : null;
    if (m !== null) params = m.slice(1);
    return m !== null;
  });
  if (route === undefined) return refuse(x, 'not_found');
  const acting = await actingOf(x, c);
  if (acting === null) return refuse(x, 'not_signed_in');
  if (method === 'GET') return route.run(x, c, acting, params, {});
  if (!sameOrigin(x, c.config.base_url)) return refuse(x, 'forbidden');
  const body = await readBody(x);
  if (body === null) return refuse(x, 'bad_request');
  if (!csrfHolds(x, acting.session, body['csrf_token'])) return refuse(x, 'forbidden');
  return route.run(x, c, acting, params, body);
}

/** The request's session and the member's role in its account; null when either is gone. */
export async function actingOf(x: Exchange, c: PortalContext): Promise<Acting | null> {
  const s = await signedIn(x, c.deps.store);
  if (s === null) return null;
  const accountId = s.session.account_id;
  const [members, account] = await Promise.all([c.deps.store.members(accountId), c.deps.accounts.find(accountId)]);
  const member = members.find((m) => m.email === s.session.email);
  if (member === undefined || account === null) return null;
  return { ...s, accountId, role: member.role, from: `portal:${s.session.email}` };
}
