import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('fpg-stripe-config-');
const file = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};

t.test('config check refuses a Stripe price mapped to an unknown plan, naming the file and the field', async (t) => {
  const bad = file(
    'stripe.yaml',
    'billing:\n  stripe:\n    plans:\n      fuel_starter_monthly: starter\n      fuel_gold_monthly: gold\n    free_plan: free\n',
  );
  const r = await runCli(['config', 'check', '--config', bad]);
  t.equal(r.code, 1);
  t.match(r.stderr, /stripe\.yaml: billing\.stripe\.plans\.fuel_gold_monthly: unknown plan "gold"/);
  t.match(r.stderr, /stripe\.yaml: billing\.stripe\.free_plan: unknown plan "free"/);
  t.notMatch(r.stderr, /fuel_starter_monthly/, 'a mapping to a configured plan is fine');
  const perAccount = file('enterprise.yaml', 'billing:\n  stripe:\n    plans:\n      fuel_enterprise: enterprise\n');
  const e = await runCli(['config', 'check', '--config', perAccount]);
  t.equal(e.code, 1);
  t.match(
    e.stderr,
    /enterprise\.yaml: billing\.stripe\.plans\.fuel_enterprise: plan "enterprise" has no default limit to give/,
  );
  const good = file('good.yaml', 'billing:\n  stripe:\n    plans:\n      fuel_starter_monthly: starter\n');
  const c = loadConfig({ file: good, env: {} });
  t.same(
    { ...c.billing.stripe, unpaid_message: undefined },
    {
      plans: { fuel_starter_monthly: 'starter' },
      free_plan: 'developer',
      grace_days: 3,
      unpaid_message: undefined,
      checkout: false,
      api_base: 'https://api.stripe.com',
    },
    'the defaults',
  );
});
