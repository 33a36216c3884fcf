/**
 * The customer portal (docs/portal.md) under /portal/ on the public listener: pages that work
 * without script, their JSON API under /portal/api/, and its OpenAPI document. One pattern
 * route, tried after every exact path, so the metered routes are matched as before.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../config/load.js';
import type { PortalConfig } from '../../config/portal-config.js';
import { isGatewayError } from '../../failures.js';
import type { Exchange, RouteDef } from '../../http/core-types.js';
import { crashed, storeFailed, type Target } from '../../http/metered/pipeline.js';
import { actingOf, api, whoAmI } from './api.js';
import type { PortalContext } from './context.js';
import type { PortalDeps } from './deps.js';
import { takeFirstKey } from './first-key.js';
import { answer, empty, html, refuse } from './http.js';
import { PORTAL_OPENAPI } from './openapi-doc.js';
import { webhooksPageFor } from './page-webhooks.js';
import { CSS, homePage, signInPage, unavailablePage } from './pages.js';
import { passkeySignIn, passkeysElsewhere, passkeysSection } from './passkey-pages.js';
import { planSection } from './plan-section.js';
import { sendLimit } from './send-limit.js';
import { firstKeyNotice } from './shown-once.js';
import { followLink, issue } from './sign-in.js';
import { tryItLink, tryItPage } from './try-it.js';

export type { PortalDeps, SendLink, WebhookView } from './deps.js';
export { consoleSender, smtpSender } from './mail.js';

/** Sends `email` a sign-in link, as a sign-in request would (an operator approved its sign-up). */
export const signInLinkSender =
  (config: PortalConfig, deps: PortalDeps, baseUrl: () => string) =>
  (email: string): Promise<void> =>
    issue({ config, deps, baseUrl }, email);

export function portalRoutes(config: PortalConfig, deps: PortalDeps | null, baseUrl: () => string): RouteDef[] {
  if (!config.enabled || deps === null) return [];
  const c: PortalContext = { config, deps, baseUrl, sends: sendLimit() };
  return [
    {
      path: '/portal/*',
      pattern: true,
      route: {
        kind: 'handler',
        name: 'portal',
        methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
        handle: (x, target) => void serve(x, c, target).catch((err: unknown) => failedFor(x, err, target.path)),
      },
    },
    {
      path: '/portal',
      route: { kind: 'handler', name: 'portal', handle: (x) => empty(x, 308, ['Location', '/portal/']) },
    },
  ];
}

const DOCUMENT = JSON.stringify(PORTAL_OPENAPI);
/** The pages' one script (public/portal/portal.js), read once. */
const SCRIPT = readFileSync(join(PROJECT_ROOT, 'public', 'portal', 'portal.js'), 'utf8');

async function serve(x: Exchange, c: PortalContext, { path, search }: Target): Promise<void> {
  const rest = path.slice('/portal/'.length);
  if (rest.startsWith('api/')) return api(x, c, rest.slice(4));
  const get = x.req.method === 'GET' || x.req.method === 'HEAD';
  if (!get) return refuse(x, 'not_found');
  if (rest === 'auth') return followLink(x, c, search);
  if (rest === 'openapi.json') return answer(x, 200, 'application/json', DOCUMENT);
  if (rest === 'portal.css') return answer(x, 200, 'text/css; charset=utf-8', CSS);
  if (rest === 'webhooks') return webhooksPage(x, c);
  if (rest === 'portal.js') return answer(x, 200, 'text/javascript; charset=utf-8', SCRIPT);
  if (rest === 'try') return html(x, 200, tryItPage());
  if (rest !== '') return refuse(x, 'not_found');
  const elsewhere = passkeysElsewhere(x, c);
  const acting = await actingOf(x, c);
  if (acting === null) return html(x, 200, signInPage(passkeySignIn(elsewhere)));
  const [me, keys, usage, members, passkeys, facts] = await Promise.all([
    whoAmI(c, acting),
    c.deps.keys.list(acting.accountId),
    c.deps.usage.usage(acting.accountId, 90),
    c.deps.store.members(acting.accountId),
    c.deps.store.passkeys(acting.session.email),
    c.deps.planFacts(acting.accountId),
  ]);
  if (facts === null) return html(x, 200, signInPage(passkeySignIn(elsewhere)));
  // Taken once the rest is read (a failure above leaves it for the next try); a HEAD leaves it to the GET.
  const firstKey = x.req.method === 'GET' ? await takeFirstKey(c.deps.store, acting.token) : null;
  html(
    x,
    200,
    homePage({
      email: me.email,
      csrf: me.csrf_token,
      account: me.account,
      accounts: me.accounts,
      upgradeUrl: me.upgrade_url,
      keys: keys.keys,
      usage: usage.usage,
      days: usage.days,
      members,
      ...(firstKey === null ? {} : { notice: firstKeyNotice(firstKey) }),
      more: passkeysSection(passkeys, me.csrf_token, elsewhere) + tryItLink,
      planHtml: planSection({
        facts,
        usage: usage.usage,
        csrf: me.csrf_token,
        billing: c.deps.billing,
        owner: acting.role === 'owner',
      }),
    }),
  );
}

/** The webhooks page, for a signed-in member; anyone else signs in first. */
async function webhooksPage(x: Exchange, c: PortalContext): Promise<void> {
  const acting = await actingOf(x, c);
  if (acting === null) return empty(x, 303, ['Location', '/portal/']);
  return webhooksPageFor(x, c, acting);
}

/** The store unreachable is a 503 (a page's, on a page); anything else the core's 500. */
function failedFor(x: Exchange, err: unknown, path: string): void {
  if (x.res.headersSent) return;
  if (!isGatewayError(err, 'STORE_UNAVAILABLE')) return crashed(x, err);
  if (path.startsWith('/portal/api/')) return void storeFailed(x, '', err, 'nothing');
  storeFailed(x, '', err, 'nothing', () => html(x, 503, unavailablePage(), ['Retry-After', 1]));
}
