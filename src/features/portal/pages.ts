/**
 * The portal's pages, rendered on the server: they work without script. Every value from a
 * person or the store goes through `esc`, and a form carries the session's CSRF token.
 */
import type { KeyView } from '../../keys/api-keys.js';
import type { Usage } from '../../quota/usage.js';
import type { Member } from '../../store/store.js';
import { GRACES_S } from './context.js';

import { esc } from './escape.js';
import { CHART_CSS, usageChart } from './usage-chart.js';

export { esc };

export const CSS = `body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;color:#111;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ccc;padding:.3rem;text-align:left}
form.inline{display:inline}input,select,button{font:inherit;margin:.2rem 0}
div.wide{overflow-x:auto}pre{white-space:pre-wrap}code{word-break:break-all;background:#f3f3f3;padding:.1rem .3rem}
a:focus,button:focus,input:focus,select:focus,[tabindex]:focus{outline:3px solid #1a5fb4}
${CHART_CSS}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)} · Fuel Price Gateway</title><link rel="stylesheet" href="/portal/portal.css"><script src="/portal/portal.js" defer></script></head><body><main>${body}</main></body></html>`;
}

/** The sign-in page; `passkey`: its passkey sign-in form, or where passkeys work instead (passkey-pages.ts). */
export const signInPage = (passkey: string): string =>
  page(
    'Sign in',
    `<h1>Sign in</h1><p>We email you a link that signs you in. A new address gets an account.</p>
<form method="post" action="/portal/api/sign-in"><label for="email">Email</label><br>
<input id="email" name="email" type="email" autocomplete="email" required><br><button>Email me a link</button></form>
${passkey}`,
  );

export const linkSentPage = (): string =>
  page(
    'Check your email',
    '<h1>Check your email</h1><p>If the address can sign in, a link is on its way. It works once, for 15 minutes.</p>',
  );

/** The store unreachable, on a page (a link's token may be spent: its take may have gone through). */
export const unavailablePage = (): string =>
  page(
    'Try again shortly',
    '<h1>The portal cannot answer just now</h1><p>Its store is out of reach. Try again in a minute. If you came here from a sign-in link, it may be used up: <a href="/portal/">ask for a new one</a>.</p>',
  );

export const signUpWaitingPage = (): string =>
  page(
    'Sign-up received',
    '<h1>Sign-up received</h1><p>An operator approves new accounts. You will get an email with a new sign-in link once yours is approved.</p>',
  );

export const secretPage = (name: string, secret: string): string =>
  page(
    'Your new key',
    `<h1>Your new key</h1><p>The key <strong>${esc(name)}</strong>. Copy it now: it is shown once.</p><p><code>${esc(secret)}</code> <button type="button" class="copy" hidden>Copy</button> <span role="status"></span></p><p><a href="/portal/">Back to your keys</a></p>`,
  );

export interface HomeView {
  email: string;
  csrf: string;
  account: { id: string; plan: string; role: string };
  accounts: Array<{ id: string; role: string }>;
  upgradeUrl: string | null;
  keys: KeyView[];
  usage: Usage;
  days: Array<{ day: string; requests: number }>;
  members: Member[];
  /** Shown above the rest (already HTML): a secret shown once. */
  notice?: string;
  /** Sections after the rest (already HTML): passkeys. */
  more?: string;
  /** The plan section, rendered by plan-section.ts. */
  planHtml: string;
}

export const hidden = (csrf: string): string => `<input type="hidden" name="csrf_token" value="${esc(csrf)}">`;

function keysSection(v: HomeView): string {
  const graces = GRACES_S.map((g) => `<option value="${g}">${g === 0 ? 'no grace' : `${g / 60} min`}</option>`).join(
    '',
  );
  const rows = v.keys
    .map(
      (
        k,
      ) => `<tr><td>${esc(k.name)}</td><td><code>${esc(k.hint)}</code></td><td>${esc(k.scopes.join(', '))}</td><td>${esc(k.created_at)}</td><td>${esc(k.last_used_on ?? 'never')}</td><td>${esc(k.expires_at ?? '')}</td>
<td><form class="inline" method="post" action="/portal/api/keys/${esc(k.id)}/rotate">${hidden(v.csrf)}<label>Grace <select name="grace_s">${graces}</select></label> <button>Rotate</button></form>
<form class="inline" method="post" action="/portal/api/keys/${esc(k.id)}/delete">${hidden(v.csrf)}<button>Revoke</button></form></td></tr>`,
    )
    .join('');
  return `<h2>Keys</h2><div class="wide" role="region" aria-label="Keys" tabindex="0"><table><thead><tr><th>Name</th><th>Hint</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Expires</th><th>Actions</th></tr></thead><tbody>${rows}</tbody></table></div>
<form method="post" action="/portal/api/keys">${hidden(v.csrf)}<label for="key-name">New key's name</label> <input id="key-name" name="name" required maxlength="64"> <button>Create key</button></form>`;
}

function usageSection(v: HomeView): string {
  const u = v.usage;
  const rows = v.days
    .filter((d) => d.requests > 0)
    .map((d) => `<tr><td>${esc(d.day)}</td><td>${esc(d.requests)}</td></tr>`)
    .join('');
  const upgrade = v.upgradeUrl === null ? '' : ` <a href="${esc(v.upgradeUrl)}">Upgrade</a>`;
  return `<h2>Usage</h2><p id="usage">Plan <strong>${esc(u.plan_type)}</strong>: ${esc(u.requests_used)} of ${esc(u.request_limit ?? 'unlimited')} requests used, ${esc(u.requests_remaining ?? '')} left; the period ends ${esc(u.period_ends_at)}.${upgrade}</p>
${usageChart(v.days)}<table><caption>Requests per day, last 90 days (days with requests)</caption><thead><tr><th>Day</th><th>Requests</th></tr></thead><tbody>${rows}</tbody></table><p><a href="/portal/api/usage.csv">Download CSV</a></p>`;
}

function membersSection(v: HomeView): string {
  const owner = v.account.role === 'owner';
  const rows = v.members
    .map(
      (m) =>
        `<tr><td>${esc(m.email)}</td><td>${esc(m.role)}</td><td>${esc(m.added_at)}</td><td>${owner ? `<form class="inline" method="post" action="/portal/api/members/${encodeURIComponent(m.email)}/delete">${hidden(v.csrf)}<button>Remove</button></form>` : ''}</td></tr>`,
    )
    .join('');
  const invite = owner
    ? `<form method="post" action="/portal/api/members">${hidden(v.csrf)}<label for="invite">Invite by email</label> <input id="invite" name="email" type="email" required> <select name="role" aria-label="Role"><option>developer</option><option>owner</option></select> <button>Invite</button></form>`
    : '';
  return `<h2>Members</h2><div class="wide" role="region" aria-label="Members" tabindex="0"><table><thead><tr><th>Email</th><th>Role</th><th>Added</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>${invite}`;
}

export function homePage(v: HomeView): string {
  const others = v.accounts
    .filter((a) => a.id !== v.account.id)
    .map(
      (a) =>
        `<form class="inline" method="post" action="/portal/api/switch">${hidden(v.csrf)}<input type="hidden" name="account_id" value="${esc(a.id)}"><button>Switch to ${esc(a.id)}</button></form>`,
    )
    .join(' ');
  const header = `<h1>Account ${esc(v.account.id)}</h1><p>Signed in as ${esc(v.email)} (${esc(v.account.role)}). ${others}</p>
<form class="inline" method="post" action="/portal/api/sign-out">${hidden(v.csrf)}<button>Sign out</button></form>
<form class="inline" method="post" action="/portal/api/sign-out-everywhere">${hidden(v.csrf)}<button>Sign out everywhere</button></form>
<p><a href="/portal/webhooks">Webhooks</a></p>`;
  return page(
    'Your account',
    header + (v.notice ?? '') + keysSection(v) + v.planHtml + usageSection(v) + membersSection(v) + (v.more ?? ''),
  );
}
