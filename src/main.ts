#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs, UsageError } from './cli/args.js';
import { OPERATE_USAGE } from './cli/operate-usage.js';
import { GatewayError } from './failures.js';

// The command's own modules are loaded once its command line is accepted: `--help` and a refused
// line answer in about 70 ms, not the 400 ms of loading the whole gateway.
const loading = () => import('./config/load.js');
// `serve` and `config check` load through one function, so the check refuses what the start would.
const starting = () => import('./cli/start-config.js');

const USAGE = `usage: fuel-gateway [serve] [--config FILE]
       fuel-gateway config check [--config FILE]
       fuel-gateway config reference          (every key, its default and meaning, as Markdown)
${OPERATE_USAGE}
Every command takes --config FILE (or FUEL_GATEWAY_CONFIG) and the environment overrides.`;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  const configFile = args.options.get('config');
  const [command = 'serve', sub] = args.positionals;
  switch (command) {
    case 'serve': {
      const [{ loadStartConfig }, { runServe }] = await Promise.all([starting(), import('./cli/serve.js')]);
      await runServe(loadStartConfig({ file: configFile, env: process.env }));
      return 0;
    }
    case 'config':
      if (sub === 'reference') {
        const [{ DEFAULT_CONFIG_FILE }, { configReference }] = await Promise.all([
          loading(),
          import('./config/reference.js'),
        ]);
        process.stdout.write(configReference(readFileSync(DEFAULT_CONFIG_FILE, 'utf8')));
        return 0;
      }
      if (sub !== 'check') break;
      {
        const [{ loadStartConfig }, { maskTree }] = await Promise.all([starting(), import('./config/mask.js')]);
        const config = loadStartConfig({ file: configFile, env: process.env });
        process.stdout.write(`${JSON.stringify(maskTree(config), null, 2)}\n`);
      }
      return 0;
    case 'accounts':
    case 'keys':
    case 'prices':
    case 'usage':
    case 'cache':
    case 'webhooks':
    case 'billing': {
      const [{ loadConfig }, { runOperate }, { default: pino }] = await Promise.all([
        loading(),
        import('./cli/operate.js'),
        import('pino'),
      ]);
      // CLI logs (store connection trouble) go to stderr; stdout is the JSON answer.
      await runOperate(loadConfig({ file: configFile }), args, pino({ level: 'warn' }, pino.destination(2)));
      return 0;
    }
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
  }
  throw new UsageError(`unknown command: ${args.positionals.join(' ')}`);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      // One line naming what is wrong, not the whole usage to look for it in.
      process.stderr.write(`${err.message} (fuel-gateway --help for usage)\n`);
      process.exitCode = 2;
      return;
    }
    const text =
      err instanceof GatewayError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    process.stderr.write(`${text}\n`);
    process.exitCode = 1;
  },
);
