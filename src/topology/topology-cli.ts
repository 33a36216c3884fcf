import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { PROJECT_ROOT } from '../config/load.js';
import { Topology } from './topology.js';

const USAGE = `usage: npm run topology -- [--gateways N] [--port P] [--gateway-port B] [--host H] [--state-dir DIR]
                             [--tls-cert PEM [--tls-port P]] [--gateway-config FILE]
                             (--port or --tls-port 0 picks a free one)
--gateway-port B (1024-65000, default 9101) is the first gateway's port: the others take the next
free ones, their admin listeners from B+100, Redis from B+200: offsets of B, so B is never 0.
Runs Redis, N gateways (deploy/gateway.yaml, or --gateway-config FILE in its place) and HAProxy
(deploy/haproxy.cfg) on this machine.
Prints one JSON line when ready. SIGHUP: rolling restart of the gateways. SIGTERM: stop all.`;

const port = z.coerce.number().int().min(0).max(65535);
const optionsSchema = z.strictObject({
  gateways: z.coerce.number().int().min(1).max(16).default(3),
  port: port.default(8080),
  'gateway-port': z.coerce.number().int().min(1024).max(65000).default(9101),
  host: z.string().min(1).default('127.0.0.1'),
  'state-dir': z.string().min(1).default(resolve(PROJECT_ROOT, 'data/local/topology')),
  'tls-cert': z.string().min(1).optional(),
  'tls-port': port.optional(),
  'gateway-config': z.string().min(1).optional(),
});

function options(argv: string[]): z.infer<typeof optionsSchema> {
  const { values } = parseArgs({
    args: argv,
    options: {
      gateways: { type: 'string' },
      port: { type: 'string' },
      'gateway-port': { type: 'string' },
      host: { type: 'string' },
      'state-dir': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-port': { type: 'string' },
      'gateway-config': { type: 'string' },
    },
    strict: true,
  });
  const parsed = optionsSchema.safeParse(values);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
  const o = parsed.data;
  if (o['tls-port'] !== undefined && o['tls-cert'] === undefined) throw new Error('--tls-port needs --tls-cert');
  // Checked here: HAProxy would only say so in its log, and the start would wait out its timeout.
  for (const file of [o['tls-cert'], o['gateway-config']]) if (file !== undefined) accessSync(file, constants.R_OK);
  return o;
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const o = options(argv);
  // The ready line comes first: events of processes restarted while starting wait for it.
  let held: Array<Record<string, unknown>> | null = [];
  const print = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
  const emit = (event: Record<string, unknown>): void => (held ? void held.push(event) : print(event));
  const topology = new Topology({
    gateways: o.gateways,
    port: o.port,
    basePort: o['gateway-port'],
    host: o.host,
    stateDir: resolve(o['state-dir']),
    tlsCert: o['tls-cert'] === undefined ? undefined : resolve(o['tls-cert']),
    tlsPort: o['tls-port'],
    gatewayConfig: o['gateway-config'] === undefined ? undefined : resolve(o['gateway-config']),
    emit,
  });
  let stopping = false;
  const stop = (code: number) => (): void => {
    if (stopping) return;
    stopping = true;
    topology.stop().then(
      () => process.exit(code),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop(0));
  process.on('SIGINT', stop(0));
  // Signals that arrive during start wait for it: a rolling restart of half-started gateways means nothing.
  const started = topology.start();
  process.on('SIGHUP', () => {
    void started
      .then(() => topology.rollingRestart())
      .catch((err: unknown) => emit({ event: 'error', message: (err as Error).message }));
  });
  try {
    print(await started);
    for (const event of held) print(event);
    held = null;
  } catch (err) {
    process.stderr.write(`topology: ${(err as Error).message}\n`);
    stop(1)();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`topology: ${(err as Error).message}\n${USAGE}\n`);
  process.exitCode = 2;
});
