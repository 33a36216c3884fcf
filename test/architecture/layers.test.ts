/**
 * The layers of src/ (.dependency-cruiser.cjs) hold: no circular import, no import from a lower
 * layer to a higher one, no feature importing another, nothing above the foundation in store/.
 * A violation fails here with the rule's name, the importing module and the imported one.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: Array<{ name: string }>;
}
interface CruiseResult {
  modules: Array<{ source: string }>;
  summary: { violations: Violation[]; totalCruised: number };
}

const root = fileURLToPath(new URL('../../', import.meta.url));
const config = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as {
  layers: Array<{ name: string; path: string }>;
};

// The checker's own command line, as `npx depcruise` runs it; without tap's loaders and coverage.
const run = spawnSync(
  process.execPath,
  [
    join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
    'src',
    '--config',
    '.dependency-cruiser.cjs',
    '--output-type',
    'json',
  ],
  { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 64 << 20 },
);

t.test('the dependency checker ran', async (t) => {
  t.equal(run.error, undefined, 'started');
  t.ok(run.stdout.startsWith('{'), `it answered: ${run.stderr.slice(0, 500)}`);
});

const result = JSON.parse(run.stdout || '{"modules":[],"summary":{"violations":[],"totalCruised":0}}') as CruiseResult;

t.test('no import breaks a rule of .dependency-cruiser.cjs', async (t) => {
  t.ok(result.summary.totalCruised > 50, `${result.summary.totalCruised} modules cruised`);
  for (const v of result.summary.violations) {
    const via = v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' → ')})` : '';
    t.fail(`${v.rule.name}: ${v.from} → ${v.to}${via}`);
  }
  t.equal(result.summary.violations.length, 0, 'no violations');
});

t.test('every layer names modules, so no rule passes for want of matching anything', async (t) => {
  const sources = result.modules.map((m) => m.source).filter((s) => s.startsWith('src/'));
  for (const layer of config.layers) {
    const re = new RegExp(layer.path);
    t.ok(
      sources.some((s) => re.test(s)),
      `layer ${layer.name} (${layer.path}) matches a module`,
    );
  }
});

// A type cannot hide one field of the request from a feature and not from the core, so this
// holds it: a feature's handler uses `x.services`, and the core's own state (draining, the store
// outage, key hashes, routes: http/core-types.ts ListenerCore) stays out of its reach.
t.test("no feature reads the core's own state, only the services", async (t) => {
  const dir = join(root, 'src/features');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  t.ok(files.length > 10, `${files.length} feature files read`);
  for (const f of files) {
    const code = readFileSync(join(dir, f), 'utf8');
    t.notMatch(code, /\.core\b|\bcore\s*[,}:]|ListenerCore/, `src/features/${f}`);
  }
});
