import { readFileSync } from 'node:fs';
import { UsageError } from '../admin/command-table.js';
import { OPERATOR_COMMANDS, OPERATOR_USAGE } from '../admin/commands.js';
import type { Sink } from '../admin/usage-export.js';
import { GatewayError } from '../failures.js';
import { type Args, parseArgs } from './args.js';

// The command's own modules are loaded once its command line is accepted: `--help` and a refused
// line answer in about 70 ms, not the 400 ms of loading the whole gateway.
const loading = () => import('../config/load.js');
// `serve` and `config check` load through one function, so the check refuses what the start would.
const starting = () => import('./start-config.js');

const USAGE = `usage: fuel-gateway [serve] [--config FILE]
       fuel-gateway config check [--config FILE]
       fuel-gateway config reference          (every key, its default and meaning, as Markdown)
${OPERATOR_USAGE}
Every command takes --config FILE (or FUEL_GATEWAY_CONFIG) and the environment overrides.`;

/** What a command line runs with: the process' environment and output, or a test's. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  /** The answer: JSON, an export, the help. */
  stdout: Sink;
  /** Logs, audit lines and the one line of a failure. */
  stderr: { write(text: string): unknown };
}

async function config(sub: string | undefined, file: string | undefined, io: CliIo): Promise<void> {
  if (sub === 'reference') {
    const [{ DEFAULT_CONFIG_FILE }, { configReference }] = await Promise.all([
      loading(),
      import('../config/reference.js'),
    ]);
    io.stdout.write(configReference(readFileSync(DEFAULT_CONFIG_FILE, 'utf8')));
    return;
  }
  const [{ loadStartConfig }, { maskTree }] = await Promise.all([starting(), import('../config/mask.js')]);
  const checked = loadStartConfig({ file, env: io.env });
  io.stdout.write(`${JSON.stringify(maskTree(checked), null, 2)}\n`);
}

async function operate(args: Args, file: string | undefined, io: CliIo): Promise<void> {
  const [group, verb] = args.positionals;
  const command = OPERATOR_COMMANDS.find((c) => c.words[0] === group && c.words[1] === verb);
  if (command === undefined) throw new UsageError(`unknown command: ${args.positionals.join(' ')}`);
  const [{ loadConfig }, { runOperate }, { default: pino }] = await Promise.all([
    loading(),
    import('./operate.js'),
    import('pino'),
  ]);
  // CLI logs (store connection trouble) go to stderr; stdout is the JSON answer.
  const log = pino({ level: 'warn' }, io.stderr as { write(text: string): void });
  await runOperate(loadConfig({ file, env: io.env }), command, args, io.stdout, log);
}

async function run(argv: string[], io: CliIo): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) return void io.stdout.write(`${USAGE}\n`);
  const args = parseArgs(argv);
  const file = args.options.get('config');
  const [command = 'serve', sub] = args.positionals;
  if (command === 'serve') {
    const [{ loadStartConfig }, { runServe }] = await Promise.all([starting(), import('./serve.js')]);
    return runServe(loadStartConfig({ file, env: io.env }));
  }
  if (command === 'help') return void io.stdout.write(`${USAGE}\n`);
  if (command === 'config') return config(sub, file, io);
  return operate(args, file, io);
}

/**
 * `fuel-gateway ARGV`: runs the command and says how it ended, 0, 1 (it failed: one line on
 * stderr) or 2 (a command line no command accepts). main.ts runs it on the process; tests call
 * it in-process.
 */
export async function runCommandLine(argv: string[], io: CliIo): Promise<number> {
  try {
    await run(argv, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      // One line naming what is wrong, not the whole usage to look for it in.
      io.stderr.write(`${err.message} (fuel-gateway --help for usage)\n`);
      return 2;
    }
    const text =
      err instanceof GatewayError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    io.stderr.write(`${text}\n`);
    return 1;
  }
}
