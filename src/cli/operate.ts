import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { Operations } from '../admin/operations.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { bookOptions, PriceBook } from '../prices/book.js';
import { createStore } from '../store/create.js';
import type { Args } from './args.js';

export const OPERATE_USAGE = `       fuel-gateway accounts create --plan P [--label L] [--limit N] [--anchor ISO] [--status S]
       fuel-gateway accounts show|disable|enable|rotate-key ID
       fuel-gateway accounts set-plan ID PLAN
       fuel-gateway prices publish FILE
       fuel-gateway prices show|history`;

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

async function dispatch(ops: Operations, { positionals: [group, verb, a, b], options }: Args): Promise<unknown> {
  const command = `${group} ${verb ?? ''}`;
  switch (command) {
    case 'accounts create': {
      const body: Record<string, unknown> = { plan: options.get('plan') };
      for (const k of ['label', 'anchor', 'status']) if (options.has(k)) body[k] = options.get(k);
      if (options.has('limit')) body['limit'] = numberOrText(options.get('limit'));
      return ops.createAccount(body);
    }
    case 'accounts show':
      return ops.showAccount(need(a, 'account id'));
    case 'accounts disable':
      return ops.patchAccount(need(a, 'account id'), { status: 'inactive' });
    case 'accounts enable':
      return ops.patchAccount(need(a, 'account id'), { status: 'active' });
    case 'accounts rotate-key':
      return ops.rotateKey(need(a, 'account id'));
    case 'accounts set-plan':
      return ops.patchAccount(need(a, 'account id'), { plan: need(b, 'plan') });
    case 'prices publish':
      return ops.publishPrices(readJsonFile(need(a, 'price-set file')));
    case 'prices show':
      return ops.prices();
    case 'prices history':
      return ops.priceHistory();
  }
  throw new GatewayError('BAD_REQUEST', `unknown command: ${command.trim()}`);
}

/**
 * `accounts …` and `prices …`: the admin API's operations run against the configured store,
 * printing the same JSON the admin API answers.
 */
export async function runOperate(config: Config, args: Args, log: Logger): Promise<void> {
  if (config.store.type === 'memory') throw new GatewayError('BAD_REQUEST', MEMORY_STORE_HELP);
  const store = createStore(config, log);
  const book = new PriceBook(store, bookOptions(config), systemClock, log);
  try {
    await book.load();
    const result = await dispatch(new Operations(store, config, book, systemClock), args);
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    book.close();
    await store.close();
  }
}
