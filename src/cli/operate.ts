import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { auditLog } from '../admin/audit.js';
import { buildOperations, type Operations } from '../admin/operations.js';
import type { UsageExport } from '../admin/usage-export.js';
import { systemClock } from '../clock.js';
import { exporterNameOf } from '../config/billing-config.js';
import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import { bookOptions, PriceBook, type Published } from '../prices/book.js';
import { createStore } from '../store/create.js';
import { PriceEvents } from '../webhooks/price-events.js';
import { type Args, UsageError } from './args.js';
import { writeExportFile } from './export-file.js';

const MEMORY_STORE_HELP =
  'The configured store is the embedded memory store: accounts and prices live inside the running ' +
  'server, not somewhere this command can reach. Use the admin API of the running gateway ' +
  '(e.g. curl -X POST http://127.0.0.1:8081/admin/accounts -H "Content-Type: application/json" ' +
  '-d \'{"plan":"starter"}\'), or set REDIS_URL (store.type: redis) to manage a shared store from here.';

/** `--limit 500` is a number; anything else goes to validation as given, which names the field. */
const numberOrText = (v: string | undefined): unknown => (v !== undefined && /^\d+$/.test(v) ? Number(v) : v);

function need(value: string | undefined, what: string): string {
  if (value === undefined) throw new GatewayError('BAD_REQUEST', `missing ${what}`);
  return value;
}

function readJsonFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new GatewayError('BAD_REQUEST', `${file}: ${(e as Error).message}`);
  }
}

// What the audit line says a change came from.
const FROM = 'cli';

/** The options after --config, which every command takes: validation names any other it does not know. */
function listOptions(options: Map<string, string>): Record<string, string> {
  return Object.fromEntries([...options].filter(([k]) => k !== 'config'));
}

/** `--stripe-customer` and `--billing-subject` as the account's external ids. */
function externalIds(options: Map<string, string>): Record<string, string> {
  const ids: Record<string, string> = {};
  if (options.has('stripe-customer')) ids['stripe_customer'] = options.get('stripe-customer') as string;
  if (options.has('billing-subject')) ids['billing_subject'] = options.get('billing-subject') as string;
  return ids;
}

/** `10/1` as a burst limit (numbers are checked where the admin API checks them), `none` as null. */
function burstOf(text: string): unknown {
  if (text === 'none') return null;
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m)
    throw new GatewayError(
      'BAD_REQUEST',
      `burst: expected N/S (N requests in any S seconds, e.g. 10/1) or none, not "${text}"`,
    );
  return { limit: Number(m[1]), window_s: Number(m[2]) };
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `15m`, `6h`, `30d` (or plain seconds) as seconds; anything else as given, for validation to name. */
function seconds(v: string): unknown {
  const m = /^(\d+)([smhd]?)$/.exec(v);
  return m ? Number(m[1]) * (UNITS[m[2] || 's'] as number) : v;
}

function graceBody(options: Map<string, string>): Record<string, unknown> {
  const grace = options.get('grace');
  return grace === undefined ? {} : { grace_s: seconds(grace) };
}

/** A key's options as the admin API's body: `--expires` a time, a duration from now, or `never`. */
function keyBody(options: Map<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const list = (v: string): string[] => v.split(',').filter((s) => s !== '');
  if (options.has('name')) body['name'] = options.get('name');
  const expires = options.get('expires');
  if (expires !== undefined) {
    const s = seconds(expires);
    body['expires_at'] =
      expires === 'never' ? null : typeof s === 'number' ? new Date(Date.now() + s * 1000).toISOString() : expires;
  }
  if (options.has('scopes')) body['scopes'] = list(options.get('scopes') as string);
  const allow = options.get('allow');
  if (allow !== undefined) body['allowed_cidrs'] = allow === 'none' ? [] : list(allow);
  return body;
}

async function dispatch(ops: Operations, { positionals: [group, verb, a, b], options }: Args): Promise<unknown> {
  const command = `${group} ${verb ?? ''}`;
  switch (command) {
    case 'webhooks add': {
      const body: Record<string, unknown> = { url: need(a, 'endpoint URL') };
      body['events'] = need(options.get('events'), '--events')
        .split(',')
        .filter((e) => e !== '');
      if (options.has('account')) body['account_id'] = options.get('account');
      if (options.has('description')) body['description'] = options.get('description');
      return ops.webhooks.create(body, FROM);
    }
    case 'webhooks list':
      return ops.webhooks.list();
    case 'webhooks remove':
      return ops.webhooks.remove(need(a, 'webhook id'), FROM);
    case 'webhooks rotate-secret':
      return ops.webhooks.rotateSecret(need(a, 'webhook id'), FROM);
    case 'webhooks test':
      return ops.webhooks.test(need(a, 'webhook id'), FROM);
    case 'webhooks deliveries':
      return ops.webhooks.deliveries(need(a, 'webhook id'), listOptions(options));
    case 'accounts create': {
      const body: Record<string, unknown> = { plan: options.get('plan') };
      for (const k of ['label', 'anchor', 'status']) if (options.has(k)) body[k] = options.get(k);
      if (options.has('limit')) body['limit'] = numberOrText(options.get('limit'));
      const ids = externalIds(options);
      if (Object.keys(ids).length > 0) body['external_ids'] = ids;
      return ops.accounts.createAccount(body, FROM);
    }
    case 'accounts list':
      return ops.accounts.listAccounts(listOptions(options));
    case 'accounts show':
      return ops.accounts.showAccount(need(a, 'account id'));
    case 'accounts disable':
      return ops.accounts.patchAccount(need(a, 'account id'), { status: 'inactive' }, FROM);
    case 'accounts enable':
      return ops.accounts.patchAccount(need(a, 'account id'), { status: 'active' }, FROM);
    case 'accounts rotate-key':
      return ops.accounts.rotateKey(need(a, 'account id'), graceBody(options), FROM);
    case 'keys create':
      return ops.keys.create(need(a, 'account id'), keyBody(options), FROM);
    case 'keys list':
      return ops.keys.list(need(a, 'account id'));
    case 'keys update':
      return ops.keys.update(need(a, 'account id'), need(b, 'key id'), keyBody(options), FROM);
    case 'keys revoke': {
      const change = await ops.keys.revoke(need(a, 'account id'), need(b, 'key id'), FROM);
      return { revoked: { account_id: change.account.id, key_id: change.key.id } };
    }
    case 'keys rotate':
      return ops.keys.rotate(need(a, 'account id'), need(b, 'key id'), graceBody(options), FROM);
    case 'accounts delete':
      return ops.accounts.deleteAccount(need(a, 'account id'), FROM);
    case 'accounts set-plan': {
      // Without --limit the account's own limit goes: the new plan's allowance applies.
      const body: Record<string, unknown> = { plan: need(b, 'plan') };
      if (options.has('limit')) body['limit'] = numberOrText(options.get('limit'));
      return ops.accounts.patchAccount(need(a, 'account id'), body, FROM);
    }
    case 'accounts set-external-ids': {
      const ids = externalIds(options);
      return ops.accounts.patchAccount(
        need(a, 'account id'),
        { external_ids: Object.keys(ids).length > 0 ? ids : null },
        FROM,
      );
    }
    case 'accounts set-burst':
      return ops.accounts.patchAccount(need(a, 'account id'), { burst: burstOf(need(b, 'N/S or none')) }, FROM);
    case 'accounts grant': {
      const body: Record<string, unknown> = { requests: numberOrText(need(b, 'number of requests')) };
      if (options.has('note')) body['note'] = options.get('note');
      return ops.accounts.grant(need(a, 'account id'), body, FROM);
    }
    case 'accounts grants':
      return ops.accounts.listGrants(need(a, 'account id'));
    case 'billing failures':
      return ops.billing.failures(listOptions(options));
    case 'billing retry': {
      const body: Record<string, unknown> = {};
      for (const k of ['exporter', 'id']) if (options.has(k)) body[k] = options.get(k);
      if (options.get('all') === 'true') body['all'] = true;
      return ops.billing.retry(body, {}, FROM);
    }
    case 'prices publish':
      return ops.prices.publishPrices(readJsonFile(need(a, 'price-set file')), FROM);
    case 'prices cancel':
      return ops.prices.cancelPrices(need(a, 'effective date'), FROM);
    case 'prices show':
      return ops.prices.prices();
    case 'prices history':
      return ops.prices.priceHistory();
    case 'usage export':
    case 'usage periods': {
      const query = listOptions(options);
      delete query['out'];
      return ops.usage.usageExport(verb === 'export' ? 'days' : 'periods', query);
    }
    case 'cache purge':
      // Checked here so the operator reads the CLI's options, not the admin API's `all=true`.
      if (options.has('all') === options.has('path'))
        throw new UsageError(
          options.has('all')
            ? 'cache purge: --path P or --all, not both'
            : 'cache purge: expected --all (every entry) or --path P (one path; P* a prefix)',
        );
      return ops.cache.purgeCache(listOptions(options), FROM);
  }
  throw new GatewayError('BAD_REQUEST', `unknown command: ${command.trim()}`);
}

const isExport = (v: unknown): v is UsageExport => typeof v === 'object' && v !== null && 'writeTo' in v;

/** An export to stdout, or to a file (see writeExportFile). */
async function writeExport(e: UsageExport, out: string | undefined): Promise<void> {
  if (out === undefined) await e.writeTo(process.stdout);
  else await writeExportFile(e, out);
}

/**
 * `accounts …`, `prices …`, `usage …`, `cache purge` and `webhooks …`: the admin API's operations run against the configured store,
 * printing the same JSON the admin API answers.
 */
export async function runOperate(config: Config, args: Args, log: Logger): Promise<void> {
  if (config.store.type === 'memory') throw new GatewayError('BAD_REQUEST', MEMORY_STORE_HELP);
  const store = createStore(config, log);
  // The CLI enqueues price events; the gateways deliver them.
  const priceEvents = new PriceEvents({
    store: store.events,
    defaultSource: config.prices.source_name,
    now: systemClock.now,
    log,
  });
  // Sets taking effect are told of by the gateways, on their clocks, not by a passing command.
  const bookEvents = { published: (sets: Published[]) => priceEvents.published(sets), effective: () => undefined };
  const book = new PriceBook({ store, options: bookOptions(config), clock: systemClock, log, events: bookEvents });
  try {
    await book.load();
    // Audit lines go to stderr with the CLI's other logs (stdout is the JSON answer).
    const audit = auditLog(log);
    const exporters = config.billing.exporters.map(exporterNameOf);
    const ops = buildOperations({ store, config, book, clock: systemClock, audit, priceEvents, exporters });
    const result = await dispatch(ops, args);
    if (isExport(result)) await writeExport(result, args.options.get('out'));
    else process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    book.close();
    await store.close();
  }
}
