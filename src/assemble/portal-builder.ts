import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Operations } from '../admin/operations.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import {
  consoleSender,
  type PortalDeps,
  signInLinkSender,
  smtpSender,
  type WebhookView,
} from '../features/portal/index.js';
import { createAccountInput } from '../keys/accounts.js';
import type { Store } from '../store/store.js';
import { addDays, type DayRange, dayOf, dayRange } from '../time/days.js';
import { portalPlanDeps } from './portal-billing.js';

export interface PortalOptions {
  config: Config;
  /** Its portal concern; accounts are looked up there, made and their keys changed only through `ops`. */
  store: Pick<Store, 'portal' | 'accounts' | 'stripe'>;
  ops: Operations;
  clock: Clock;
  /** The public listener's address: the links' own when `portal.base_url` is not set. */
  address: AddressInfo;
  /** Where a sign-in link goes without SMTP (default: stdout, beside the start's curl line). */
  print?: ((line: string) => void) | undefined;
}

const stdout = (line: string): void => void process.stdout.write(`\n  ${line}\n\n`);

/**
 * The portal's dependencies: the admin API's operations (so a portal change is the same change,
 * audited and announced, raising the same events), its store concern, and how links are sent.
 */
export function buildPortal(o: PortalOptions): { deps: PortalDeps | null; url: string | null } {
  if (!o.config.portal.enabled) return { deps: null, url: null };
  const deps = portalDeps(o);
  const base = portalBaseUrl(o.config, o.address);
  // An approved sign-up is told by a link, sent by the gateway whose admin API approved it.
  o.ops.signups.onApproved(signInLinkSender(o.config.portal, deps, () => base));
  return { deps, url: `${base}/portal/` };
}

function portalDeps(o: PortalOptions): PortalDeps {
  const { config, ops, clock } = o;
  const { url, from } = config.portal.smtp;
  const zone = config.time_zone;
  const range = (days: number): DayRange => {
    const to = dayOf(clock.now(), zone);
    const r = dayRange(addDays(to, 1 - days), to, zone);
    if (r === null) throw new RangeError(`the last ${days} days are not an export range`);
    return r;
  };
  const exported = async (accountId: string, days: number, format: 'csv' | 'json'): Promise<string> => {
    const e = await ops.usage.usageExport('days', { range: range(days), account: accountId, format });
    return collect((sink) => e.writeTo(sink));
  };
  return {
    store: o.store.portal,
    ...portalPlanDeps(config, o.store.accounts, o.store.stripe),
    send: url === '' ? consoleSender(o.print ?? stdout) : smtpSender(url, from),
    accounts: {
      signUp: async (plan, by) => {
        const input = createAccountInput.parse({ plan, label: by.slice('portal:'.length).slice(0, 64) });
        const { account, api_key } = await ops.accounts.createAccount(input, by, 'first key');
        return { id: account.id, api_key };
      },
      find: async (id) => {
        const a = await o.store.accounts.getAccount(id);
        return a === null ? null : { id: a.id, plan: a.plan };
      },
    },
    keys: {
      list: (id) => ops.keys.list(id),
      create: (id, input, by) => ops.keys.create(id, input, by),
      rotate: (id, keyId, input, by) => ops.keys.rotate(id, keyId, input, by),
      update: (id, keyId, input, by) => ops.keys.update(id, keyId, input, by),
      revoke: (id, keyId, by) => ops.keys.revoke(id, keyId, by),
    },
    webhooks: {
      list: async (id) => (await ops.webhooks.list(id)).webhooks.map(shown),
      create: async (id, input, by) => {
        const { secret, ...endpoint } = await ops.webhooks.createFor(id, input, by);
        return { endpoint: shown(endpoint), secret };
      },
      remove: (id, hook, by) => ops.webhooks.remove(hook, by, id),
      test: (id, hook, by) => ops.webhooks.test(hook, by, id),
      deliveries: async (id, hook) => (await ops.webhooks.log(hook, id)).deliveries,
      replay: (id, hook, delivery, by) => ops.webhooks.replay(hook, delivery, by, id),
    },
    usage: {
      usage: async (id, days) => {
        const { usage } = await ops.accounts.showAccount(id);
        const { rows } = JSON.parse(await exported(id, days, 'json')) as {
          rows: Array<{ date: string; requests: number }>;
        };
        const counted = new Map(rows.map((r) => [r.date, r.requests]));
        const { from } = range(days);
        const out = Array.from({ length: days }, (_, i) => addDays(from, i)).map((day) => ({
          day,
          requests: counted.get(day) ?? 0,
        }));
        return { usage, days: out };
      },
      csv: (id, days) => exported(id, days, 'csv'),
    },
  };
}

/** An endpoint as the portal shows it: the session's account is its own, and no secret is ever listed. */
const shown = ({ id, url, events, description, created_at }: WebhookView): WebhookView => ({
  id,
  url,
  events,
  description,
  created_at,
});

/** `portal.base_url`, or the public listener's own address (never a request's Host header). */
export function portalBaseUrl(config: Config, address: AddressInfo): string {
  if (config.portal.base_url !== '') return config.portal.base_url.replace(/\/+$/, '');
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  const host = wildcard ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** What an export writes, as one string (an account's 90 days: a few kilobytes). */
async function collect(write: (sink: Writable) => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  await write(sink);
  return chunks.join('');
}
