/**
 * The webhooks page (`/portal/webhooks`): the account's endpoints, a form to add one, and each
 * endpoint's delivery log with replay and test buttons. It works without script, as the keys do.
 * Every value, the receivers' answers above all, goes through `esc`.
 */
import { ACCOUNT_EVENT_TYPES } from '../../events/event.js';
import type { Exchange } from '../../http/core-types.js';
import type { Acting } from './acting.js';
import type { PortalContext } from './context.js';
import type { DeliveryLog, WebhookView } from './deps.js';
import { html } from './http.js';
import { esc, hidden, page } from './pages.js';

/** Deliveries of each endpoint on the page (the API lists every one the store keeps). */
const SHOWN = 20;

interface Hook extends WebhookView {
  deliveries: DeliveryLog[];
}

export async function webhooksPageFor(x: Exchange, c: PortalContext, a: Acting): Promise<void> {
  const list = await c.deps.webhooks.list(a.accountId);
  const hooks = await Promise.all(
    list.map(async (w) => ({
      ...w,
      deliveries: (await c.deps.webhooks.deliveries(a.accountId, w.id)).slice(0, SHOWN),
    })),
  );
  html(x, 200, webhooksPage(a.session.csrf_token, hooks));
}

const button = (csrf: string, action: string, label: string): string =>
  `<form class="inline" method="post" action="${esc(action)}">${hidden(csrf)}<button>${esc(label)}</button></form>`;

function deliveryRows(csrf: string, hook: Hook): string {
  return hook.deliveries
    .map((d) => {
      const replay = button(csrf, `/portal/api/webhooks/${hook.id}/deliveries/${d.id}/replay`, 'Replay');
      const tried =
        d.attempts.length === 0
          ? '<td colspan="5">not attempted yet</td>'
          : d.attempts
              .map(
                (t) =>
                  `<td>${esc(t.at)}</td><td>${esc(t.status ?? 'none')}</td><td>${esc(t.ms)}</td><td><code>${esc(t.body)}</code></td><td>${esc(t.error ?? '')}</td>`,
              )
              .join('</tr><tr>');
      const span = Math.max(1, d.attempts.length);
      return `<tr><th scope="row" rowspan="${span}">${esc(d.event_type)}<br><code>${esc(d.id)}</code></th><td rowspan="${span}">${esc(d.state)}</td>${tried}<td rowspan="${span}">${replay}</td></tr>`;
    })
    .join('');
}

function hookSection(csrf: string, hook: Hook): string {
  const log =
    hook.deliveries.length === 0
      ? '<p>No deliveries yet.</p>'
      : `<table><caption>Latest deliveries to ${esc(hook.url)}</caption><thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempted</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">Answer (first 200 bytes)</th><th scope="col">Error</th><th scope="col"></th></tr></thead><tbody>${deliveryRows(csrf, hook)}</tbody></table>`;
  return `<section aria-labelledby="h-${esc(hook.id)}"><h3 id="h-${esc(hook.id)}"><code>${esc(hook.url)}</code></h3>
<p>${esc(hook.description ?? '')} Events: ${esc(hook.events.join(', '))}. Added ${esc(hook.created_at)}.</p>
${button(csrf, `/portal/api/webhooks/${hook.id}/test`, 'Send a test event')} ${button(csrf, `/portal/api/webhooks/${hook.id}/delete`, 'Delete')}
${log}</section>`;
}

export function webhooksPage(csrf: string, hooks: Hook[]): string {
  const boxes = ACCOUNT_EVENT_TYPES.map(
    (t) => `<label><input type="checkbox" name="event:${t}" checked> ${t}</label>`,
  ).join('<br>');
  const form = `<h2>Add an endpoint</h2><form method="post" action="/portal/api/webhooks">${hidden(csrf)}
<label for="hook-url">URL</label><br><input id="hook-url" name="url" type="url" required maxlength="2048" size="50"><br>
<label for="hook-description">Description</label><br><input id="hook-description" name="description" maxlength="500"><br>
<fieldset><legend>Events</legend>${boxes}</fieldset><button>Add endpoint</button></form>`;
  const list = hooks.length === 0 ? '<p>No endpoints yet.</p>' : hooks.map((h) => hookSection(csrf, h)).join('');
  return page(
    'Webhooks',
    `<p><a href="/portal/">Back to your account</a></p><h1>Webhooks</h1><p>Your account's own events (usage thresholds, key changes), signed as Standard Webhooks.</p><h2>Endpoints</h2>${list}${form}`,
  );
}

export const hookSecretPage = (url: string, secret: string): string =>
  page(
    'Your signing secret',
    `<h1>Endpoint added</h1><p>Deliveries to <code>${esc(url)}</code> are signed with this secret. Copy it now: it is shown once.</p><p><code>${esc(secret)}</code></p><p><a href="/portal/webhooks">Back to webhooks</a></p>`,
  );

export const hookRefusedPage = (messages: string[]): string =>
  page(
    'Endpoint not added',
    `<h1>Endpoint not added</h1><ul>${messages.map((m) => `<li>${esc(m)}</li>`).join('')}</ul><p><a href="/portal/webhooks">Back to webhooks</a></p>`,
  );
