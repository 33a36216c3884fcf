/**
 * The home page's plan section: the plan, its allowance, period and burst; with
 * `billing.stripe.checkout` on, each mapped plan offered through Stripe Checkout and a "Manage
 * billing" link to Stripe's customer portal. Its two API routes answer a form with a redirect
 * to the session Stripe made, and JSON with its URL.
 */
import { z } from 'zod';
import { StripeUnreachable } from '../../billing/stripe-sessions.js';
import type { Usage } from '../../quota/usage.js';
import { type ApiHandler, fields } from './acting.js';
import type { PlanFacts, PortalBilling } from './deps.js';
import { empty, failed, isForm, json, refuse } from './http.js';
import { esc } from './pages.js';

export interface PlanView {
  facts: PlanFacts;
  usage: Usage;
  csrf: string;
  billing: PortalBilling | null;
  /** Only an owner buys or manages the account's subscription. */
  owner: boolean;
}

const hidden = (csrf: string): string => `<input type="hidden" name="csrf_token" value="${esc(csrf)}">`;

function describe(f: PlanFacts, u: Usage): string {
  const allowance = f.limit === null ? 'set per account' : `${f.limit.toLocaleString('en')} requests`;
  const period = f.period === 'trial' ? `a ${f.trial_days ?? ''}-day trial period` : 'a monthly billing cycle';
  const burst = f.burst === null ? 'no burst limit' : `at most ${f.burst.limit} requests per ${f.burst.window_s} s`;
  return `<dl class="plan"><dt>Plan</dt><dd><strong>${esc(f.plan)}</strong></dd><dt>Allowance</dt><dd>${esc(allowance)} per period</dd><dt>Period</dt><dd>${esc(period)}, this one ${esc(u.period_started_at)} to ${esc(u.period_ends_at)}</dd><dt>Burst</dt><dd>${esc(burst)}</dd></dl>`;
}

export function planSection(v: PlanView): string {
  const { facts, billing } = v;
  let buy = '';
  if (billing !== null && v.owner) {
    // A second Checkout would make a second subscription, billed beside the first.
    const offers = billing.offers
      .filter((o) => o.plan !== facts.plan && !facts.subscribed)
      .map(
        (o) =>
          `<form class="inline" method="post" action="/portal/api/billing/checkout">${hidden(v.csrf)}<input type="hidden" name="price" value="${esc(o.price)}"><button>Upgrade to ${esc(o.plan)}${o.limit === null ? '' : ` (${esc(o.limit.toLocaleString('en'))} requests)`}</button></form>`,
      )
      .join(' ');
    const manage =
      facts.customer === null
        ? ''
        : ` <form class="inline" method="post" action="/portal/api/billing/manage">${hidden(v.csrf)}<button>Manage billing</button></form>`;
    buy = `<p>${offers}${manage}</p>`;
  }
  return `<h2>Plan</h2>${describe(facts, v.usage)}${buy}`;
}

const checkoutBody = z.strictObject({ price: z.string().min(1).max(200) });

/** Where Stripe sends the customer back: the portal itself. */
const back = (base: string, outcome: string): string => `${base}/portal/?checkout=${outcome}`;

export const startCheckout: ApiHandler = async (x, c, a, _params, body) => {
  const billing = c.deps.billing;
  if (billing === null) return refuse(x, 'not_found');
  if (a.role !== 'owner') return refuse(x, 'forbidden');
  const input = checkoutBody.safeParse(fields(body));
  const offer = input.success ? billing.offers.find((o) => o.price === input.data.price) : undefined;
  if (offer === undefined) return json(x, 400, { success: false, message: 'Bad request: price is not on offer.' });
  const facts = await c.deps.planFacts(a.accountId);
  if (facts === null) return refuse(x, 'not_found');
  if (facts.subscribed)
    return json(x, 409, { success: false, message: 'Already subscribed: change the plan under "Manage billing".' });
  const base = c.baseUrl();
  const url = await billing
    .checkout({
      accountId: a.accountId,
      price: offer.price,
      customer: facts.customer,
      successUrl: back(base, 'done'),
      cancelUrl: back(base, 'cancelled'),
    })
    .catch((err: unknown) => err as Error);
  return redirect(x, url);
};

export const manageBilling: ApiHandler = async (x, c, a) => {
  const billing = c.deps.billing;
  if (billing === null) return refuse(x, 'not_found');
  if (a.role !== 'owner') return refuse(x, 'forbidden');
  const facts = await c.deps.planFacts(a.accountId);
  if (facts?.customer == null) return refuse(x, 'not_found');
  const url = await billing.manage(facts.customer, `${c.baseUrl()}/portal/`).catch((err: unknown) => err as Error);
  return redirect(x, url);
};

/** A form is sent on to Stripe; a script is told where. Stripe silent or away: 504 or 502, not a crash. */
function redirect(x: Parameters<ApiHandler>[0], url: string | Error): void {
  if (url instanceof StripeUnreachable) return refuse(x, url.timedOut ? 'upstream_timeout' : 'upstream_unavailable');
  if (url instanceof Error) return failed(x, url);
  if (isForm(x.req)) return empty(x, 303, ['Location', url]);
  json(x, 200, { url });
}
