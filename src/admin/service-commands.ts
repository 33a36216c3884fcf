/** The commands of prices, usage, the cache, webhooks and billing, in the order `--help` shows them. */
import { MORE } from './account-commands.js';
import { listOptions, need, picked, readJsonFile } from './cli-input.js';
import { type OperatorCommand, operation, UsageError } from './command-table.js';

const webhook = (a: string | undefined): string => need(a, 'webhook id');
/** `usage export|periods`: the query without `--out`, which names the CLI's file. */
const exportQuery = (options: Map<string, string>): Record<string, string> => {
  const query = listOptions(options);
  delete query['out'];
  return query;
};
const EXPORT = ['from', 'to', 'account', 'format', 'out'];

export const SERVICE_COMMANDS: readonly OperatorCommand[] = [
  {
    words: ['prices', 'publish'],
    args: ['FILE'],
    help: 'prices publish FILE      (one set, or a history: an array of sets)',
    input: ({ args: [file] }) => ({ body: readJsonFile(need(file, 'price-set file')) }),
    operation: operation({
      method: 'PUT',
      path: '/admin/prices',
      status: 201,
      body: 'json',
      schema: (s) => ({ body: s.publishInput, invalid: 'PRICE_SET_INVALID' }),
      run: (ops, i) => ops.prices.publishPrices(i.body, i.from),
    }),
  },
  {
    words: ['prices', 'cancel'],
    args: ['DATE'],
    help: 'prices cancel DATE       (a set still scheduled)',
    input: ({ args: [date] }) => ({ ids: [need(date, 'effective date')] }),
    operation: {
      method: 'DELETE',
      path: '/admin/prices/:date',
      status: 200,
      schema: (s) => ({ params: s.cancelParams }),
      run: (ops, i) => ops.prices.cancelPrices(i.ids[0] as string, i.from),
    },
  },
  {
    words: ['prices', 'show'],
    args: [],
    help: 'prices show|history',
    input: () => ({}),
    operation: { method: 'GET', path: '/admin/prices', status: 200, run: (ops) => ops.prices.prices() },
  },
  {
    words: ['prices', 'history'],
    args: [],
    input: () => ({}),
    operation: { method: 'GET', path: '/admin/prices/history', status: 200, run: (ops) => ops.prices.priceHistory() },
  },
  {
    words: ['usage', 'export'],
    args: [],
    options: EXPORT,
    help: `usage export|periods --from DATE --to DATE [--account ID] [--format csv|json] [--out FILE]${MORE}(daily or period rows; csv by default; to stdout without --out)`,
    input: ({ options }) => ({ query: exportQuery(options) }),
    operation: operation({
      method: 'GET',
      path: '/admin/usage',
      status: 200,
      schema: (s, config) => ({ query: s.exportInput(config.time_zone, config.messages.invalid_range) }),
      run: (ops, i) => ops.usage.usageExport('days', i.query),
    }),
  },
  {
    words: ['usage', 'periods'],
    args: [],
    options: EXPORT,
    input: ({ options }) => ({ query: exportQuery(options) }),
    operation: operation({
      method: 'GET',
      path: '/admin/usage/periods',
      status: 200,
      schema: (s, config) => ({ query: s.exportInput(config.time_zone, config.messages.invalid_range) }),
      run: (ops, i) => ops.usage.usageExport('periods', i.query),
    }),
  },
  {
    words: ['cache', 'purge'],
    args: [],
    options: ['path'],
    flags: ['all'],
    help: "cache purge --all|--path P (every gateway's pass-through cache, or one path; P* a prefix)",
    input: ({ options }) => {
      // Checked here so the operator reads the CLI's options, not the admin API's `all=true`.
      if (options.has('all') === options.has('path'))
        throw new UsageError(
          options.has('all')
            ? 'cache purge: --path P or --all, not both'
            : 'cache purge: expected --all (every entry) or --path P (one path; P* a prefix)',
        );
      return { query: listOptions(options) };
    },
    operation: operation({
      method: 'DELETE',
      path: '/admin/cache',
      status: 200,
      schema: (s) => ({ query: s.purgeInput }),
      run: (ops, i) => ops.cache.purgeCache(i.query, i.from),
    }),
  },
  {
    words: ['webhooks', 'add'],
    args: ['URL'],
    options: ['events', 'account', 'description'],
    help: 'webhooks add URL --events E[,E…] [--account ID] [--description D]',
    input: ({ args: [url], options }) => {
      const body: Record<string, unknown> = { url: need(url, 'endpoint URL') };
      body['events'] = need(options.get('events'), '--events')
        .split(',')
        .filter((e) => e !== '');
      if (options.has('account')) body['account_id'] = options.get('account');
      if (options.has('description')) body['description'] = options.get('description');
      return { body };
    },
    operation: operation({
      method: 'POST',
      path: '/admin/webhooks',
      status: 201,
      body: 'json',
      schema: (s) => ({ body: s.createWebhookInput }),
      run: (ops, i) => ops.webhooks.create(i.body, i.from),
    }),
  },
  {
    words: ['webhooks', 'list'],
    args: [],
    help: 'webhooks list',
    input: () => ({}),
    operation: { method: 'GET', path: '/admin/webhooks', status: 200, run: (ops) => ops.webhooks.list() },
  },
  {
    words: ['webhooks', 'remove'],
    args: ['ID'],
    help: 'webhooks remove|rotate-secret|test ID',
    input: ({ args: [a] }) => ({ ids: [webhook(a)] }),
    operation: {
      method: 'DELETE',
      path: '/admin/webhooks/:id',
      status: 200,
      run: (ops, i) => ops.webhooks.remove(i.ids[0] as string, i.from),
    },
  },
  {
    words: ['webhooks', 'rotate-secret'],
    args: ['ID'],
    input: ({ args: [a] }) => ({ ids: [webhook(a)] }),
    operation: {
      method: 'POST',
      path: '/admin/webhooks/:id/rotate-secret',
      status: 200,
      run: (ops, i) => ops.webhooks.rotateSecret(i.ids[0] as string, i.from),
    },
  },
  {
    words: ['webhooks', 'test'],
    args: ['ID'],
    input: ({ args: [a] }) => ({ ids: [webhook(a)] }),
    operation: {
      method: 'POST',
      path: '/admin/webhooks/:id/test',
      status: 202,
      run: (ops, i) => ops.webhooks.test(i.ids[0] as string, i.from),
    },
  },
  {
    words: ['webhooks', 'deliveries'],
    args: ['ID'],
    options: ['limit'],
    help: 'webhooks deliveries ID [--limit N]',
    input: ({ args: [a], options }) => ({ ids: [webhook(a)], query: listOptions(options) }),
    operation: operation({
      method: 'GET',
      path: '/admin/webhooks/:id/deliveries',
      status: 200,
      schema: (s) => ({ query: s.deliveriesQuery }),
      run: (ops, i) => ops.webhooks.deliveries(i.ids[0] as string, i.query),
    }),
  },
  {
    words: ['billing', 'failures'],
    args: [],
    options: ['exporter'],
    help: 'billing failures [--exporter NAME]   (usage events a billing system refused)',
    input: ({ options }) => ({ query: listOptions(options) }),
    operation: operation({
      method: 'GET',
      path: '/admin/billing/failures',
      status: 200,
      schema: (s) => ({ query: s.failuresQuery }),
      run: (ops, i) => ops.billing.failures(i.query),
    }),
  },
  {
    words: ['billing', 'retry'],
    args: [],
    options: ['exporter', 'id'],
    flags: ['all'],
    help: 'billing retry --id EVENT_ID | --all [--exporter NAME]   (send them again, unchanged)',
    input: ({ options }) => ({
      body: { ...picked(options, ['exporter', 'id']), ...(options.get('all') === 'true' && { all: true }) },
    }),
    operation: operation({
      method: 'POST',
      path: '/admin/billing/retry',
      status: 200,
      body: 'json',
      schema: (s) => ({ body: s.retryInput, query: s.noQuery }),
      run: (ops, i) => ops.billing.retry(i.body, i.from),
    }),
  },
  {
    words: ['billing', 'stripe-status'],
    args: ['ACCOUNT'],
    help: "billing stripe-status ACCOUNT   (the account's Stripe customer and subscription, as mirrored)",
    input: ({ args: [a] }) => ({ ids: [a ?? ''] }),
    operation: operation({
      method: 'GET',
      path: '/admin/billing/stripe/accounts/:id',
      status: 200,
      run: (ops, i) => ops.stripe.status(i.ids[0] as string),
    }),
  },
  {
    words: ['billing', 'stripe-unmatched'],
    args: [],
    help: 'billing stripe-unmatched   (Stripe events the mirror could not apply, and why)',
    input: () => ({}),
    operation: operation({
      method: 'GET',
      path: '/admin/billing/stripe/unmatched',
      status: 200,
      run: (ops) => ops.stripe.unmatched(),
    }),
  },
];
