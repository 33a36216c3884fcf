import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { privateConfig, runCli, serveRefused } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

/** A config that the schema accepts and the start refuses, with the environment it is run in. */
interface Case {
  what: string;
  settings: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  message: RegExp;
  /** The same settings in an environment where the start accepts them: `config check` passes. */
  fixedEnv?: NodeJS.ProcessEnv;
}

const dir = tempDir('fpg-start-config-');
const badPrices = join(dir, 'prices.json');
writeFileSync(badPrices, '[{"effective_date":"2026-01-07"');

const cases: Case[] = [
  {
    what: 'a Stripe exporter without STRIPE_API_KEY',
    settings: { billing: { interval_s: 60, timeout_ms: 5000, exporters: [{ type: 'stripe', event_name: 'x' }] } },
    env: { STRIPE_API_KEY: '' },
    message: /^billing\.exporters\.0 \(stripe\): set the STRIPE_API_KEY environment variable/m,
    fixedEnv: { STRIPE_API_KEY: 'rk_test_start_config_0123456789' },
  },
  {
    what: 'a rediss:// store whose CA file this machine does not have',
    settings: { store: { type: 'redis', redis: { url: 'rediss://127.0.0.1:1', tls_ca_file: join(dir, 'no-ca.pem') } } },
    env: {},
    message: /^store\.redis\.tls_ca_file: cannot read .*no-ca\.pem \(ENOENT\)$/m,
  },
  {
    what: 'a price file that exists but is not a price history',
    settings: { prices: { file: badPrices } },
    env: {},
    message: /prices\.json: .*JSON/,
  },
];

for (const c of cases)
  t.test(`${c.what}: \`config check\` and \`serve\` both refuse it, with the same message`, async (t) => {
    const config = privateConfig(c.settings);
    const [check, serve] = await Promise.all([
      runCli(['config', 'check', '--config', config], c.env),
      serveRefused(t, ['--config', config], c.env),
    ]);
    t.equal(serve.code, 1, `serve exits 1: ${serve.stderr}`);
    t.equal(check.code, serve.code, `config check exits as serve does: ${check.stderr}`);
    t.match(check.stderr, /^CONFIG_INVALID: invalid configuration:\n/);
    t.match(check.stderr, c.message);
    t.equal(serve.stderr, check.stderr, 'the same message');
    t.equal(check.stdout, '', 'config check prints no config');
    if (c.fixedEnv) {
      const fixed = await runCli(['config', 'check', '--config', config], c.fixedEnv);
      t.equal(fixed.code, 0, `accepted once the environment has it: ${fixed.stderr}`);
      t.notOk(fixed.stdout.includes(c.fixedEnv.STRIPE_API_KEY as string), 'the key is not printed');
    }
  });
