#!/usr/bin/env node
import { parseArgs } from './cli/args.js';
import { runServe } from './cli/serve.js';
import { loadConfig, maskSecrets } from './config/load.js';
import { GatewayError } from './errors.js';

const USAGE = `usage: fuel-gateway [serve] [--config FILE]
       fuel-gateway config check [--config FILE]`;

async function main(argv: string[]): Promise<number> {
  const { positionals, options } = parseArgs(argv);
  const configFile = options.get('config');
  const [command = 'serve', sub] = positionals;
  switch (command) {
    case 'serve':
      await runServe(loadConfig({ file: configFile }));
      return 0;
    case 'config':
      if (sub !== 'check') break;
      process.stdout.write(JSON.stringify(maskSecrets(loadConfig({ file: configFile })), null, 2) + '\n');
      return 0;
    case 'help':
    case '--help':
      process.stdout.write(USAGE + '\n');
      return 0;
  }
  process.stderr.write(`unknown command: ${positionals.join(' ')}\n${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof GatewayError || err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
