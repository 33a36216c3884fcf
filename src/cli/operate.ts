import type { Logger } from 'pino';
import { auditLog } from '../admin/audit.js';
import type { OperatorCommand } from '../admin/command-table.js';
import { buildOperations } from '../admin/operations.js';
import { runOperation } from '../admin/run-operation.js';
import { isExport, type Sink } from '../admin/usage-export.js';
import { systemClock } from '../clock.js';
import { exporterNameOf } from '../config/billing-config.js';
import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import { bookOptions, PriceBook, type Published } from '../prices/book.js';
import { createStore } from '../store/create.js';
import { PriceEvents } from '../webhooks/price-events.js';
import type { Args } from './args.js';
import { writeExportFile } from './export-file.js';

const MEMORY_STORE_HELP =
  'The configured store is the embedded memory store: accounts and prices live inside the running ' +
  'server, not somewhere this command can reach. Use the admin API of the running gateway ' +
  '(e.g. curl -X POST http://127.0.0.1:8081/admin/accounts -H "Content-Type: application/json" ' +
  '-d \'{"plan":"starter"}\'), or set REDIS_URL (store.type: redis) to manage a shared store from here.';

// What the audit line says a change came from.
const FROM = 'cli';

/**
 * An operator command (admin/commands.ts): the admin API's operation run against the configured
 * store, printing the same JSON the admin API answers.
 */
export async function runOperate(
  config: Config,
  command: OperatorCommand,
  args: Args,
  stdout: Sink,
  log: Logger,
): Promise<void> {
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
    const cli = { args: args.positionals.slice(command.words.length), options: args.options };
    const input = { ids: [], body: undefined, query: {}, ...command.input(cli), from: FROM };
    const answer = await runOperation(ops, command.operation, input);
    const out = args.options.get('out');
    if (isExport(answer)) await (out === undefined ? answer.writeTo(stdout) : writeExportFile(answer, out));
    else stdout.write(`${JSON.stringify(command.print ? command.print(answer) : answer, null, 2)}\n`);
  } finally {
    book.close();
    await store.close();
  }
}
