/**
 * The account's own webhook endpoints (docs/portal.md#webhooks), through the admin API's webhook
 * operations (deps.ts): owners and developers alike, as with keys. Every route names an endpoint
 * of the session's account; another account's is not found.
 */
import { z } from 'zod';
import { ACCOUNT_EVENT_TYPES } from '../../events/event.js';
import { FAILURE_STATUS, isGatewayError } from '../../failures.js';
import type { Exchange } from '../../http/core-types.js';
import { type Acting, type ApiHandler, fields } from './acting.js';
import type { PortalContext } from './context.js';
import { empty, failed, html, isForm, json } from './http.js';
import { hookRefusedPage, hookSecretPage } from './page-webhooks.js';
import { SENDS_PER_MINUTE } from './send-limit.js';

const createBody = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z.array(z.enum(ACCOUNT_EVENT_TYPES)).min(1, 'expected at least one event type'),
  description: z.string().max(500).optional(),
});

/** Where the pages' forms come back to. */
const PAGE = '/portal/webhooks';

export const listWebhooks: ApiHandler = async (x, c, a) =>
  json(x, 200, { webhooks: await c.deps.webhooks.list(a.accountId) });

export const createWebhook: ApiHandler = async (x, c, a, _params, body) => {
  const input = createBody.safeParse(isForm(x.req) ? fromForm(fields(body)) : fields(body));
  if (!input.success) {
    const details = input.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
    return refused(x, 400, 'Bad request.', details);
  }
  const made = await c.deps.webhooks.create(a.accountId, input.data, a.from).catch((err: unknown) => err);
  if (made instanceof Error) return failedWith(x, made);
  const { endpoint, secret } = made as Awaited<ReturnType<typeof c.deps.webhooks.create>>;
  if (isForm(x.req)) return html(x, 201, hookSecretPage(endpoint.url, secret));
  json(x, 201, { endpoint, secret });
};

export const deleteWebhook: ApiHandler = (x, c, a, [id = '']) =>
  settle(x, c.deps.webhooks.remove(a.accountId, id, a.from), () => empty(x, 204));

export const testWebhook: ApiHandler = async (x, c, a, [id = '']) => {
  if (limited(x, c, a)) return;
  await settle(x, c.deps.webhooks.test(a.accountId, id, a.from), (sent) => json(x, 202, sent));
};

export const webhookDeliveries: ApiHandler = (x, c, a, [id = '']) =>
  settle(x, c.deps.webhooks.deliveries(a.accountId, id), (deliveries) => json(x, 200, { deliveries }));

export const replayDelivery: ApiHandler = async (x, c, a, [id = '', delivery = '']) => {
  if (limited(x, c, a)) return;
  await settle(x, c.deps.webhooks.replay(a.accountId, id, delivery, a.from), () =>
    json(x, 202, { delivery_id: delivery }),
  );
};

/** Past SENDS_PER_MINUTE test events and replays of the account: answered 429 (true), nothing sent. */
function limited(x: Exchange, c: PortalContext, a: Acting): boolean {
  const waitS = c.sends(a.accountId, x.services.clock.now());
  if (waitS === 0) return false;
  const message = `At most ${SENDS_PER_MINUTE} test events and replays a minute: try again in ${waitS} s.`;
  if (isForm(x.req)) html(x, 429, hookRefusedPage([message]), ['Retry-After', waitS]);
  else json(x, 429, { success: false, message }, ['Retry-After', waitS]);
  return true;
}

/** Answers with `ok`'s result, or the operation's failure (404 for another account's endpoint). A form goes back to the page. */
async function settle<T>(x: Exchange, op: Promise<T>, ok: (value: T) => void): Promise<void> {
  const out = await op.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  );
  if ('err' in out) return failed(x, out.err);
  if (isForm(x.req) && x.req.method === 'POST') return empty(x, 303, ['Location', PAGE]);
  ok(out.value);
}

/** A refused endpoint (a bad or forbidden URL, too many): the admin API's words, as JSON or as a page. */
function failedWith(x: Exchange, err: Error): void {
  if (!isGatewayError(err) || FAILURE_STATUS[err.code] >= 500) return failed(x, err);
  refused(x, FAILURE_STATUS[err.code], err.message, err.details);
}

function refused(x: Exchange, status: number, message: string, details: readonly string[]): void {
  if (isForm(x.req)) return html(x, status, hookRefusedPage([message, ...details]));
  json(x, status, { success: false, message, ...(details.length > 0 ? { details } : {}) });
}

/** A form's fields as the JSON body has them: one checkbox per event type (`event:<type>`). */
function fromForm(body: Record<string, unknown>): Record<string, unknown> {
  const events = Object.keys(body)
    .filter((k) => k.startsWith('event:'))
    .map((k) => k.slice('event:'.length));
  const out: Record<string, unknown> = { url: body['url'], events };
  if (typeof body['description'] === 'string' && body['description'] !== '') out['description'] = body['description'];
  return out;
}
