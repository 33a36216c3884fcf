import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { configKeys, configReference } from '../../src/config/reference.js';
import { ROOT } from '../helpers/cli.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const defaults = readFileSync(join(ROOT, 'config/default.yaml'), 'utf8');

t.test('every configuration key is documented with its meaning', async (t) => {
  const keys = configKeys(defaults);
  t.ok(keys.length > 50);
  for (const k of keys)
    t.ok(k.meaning.length > 0, `${k.path} has a meaning (.describe() in src/config/config-schema.ts)`);
});

t.test('every key of the defaults file is in the reference', async (t) => {
  const documented = new Set(configKeys(defaults).map((k) => k.path));
  const leaves = (node: unknown, path: string[]): string[] =>
    typeof node === 'object' && node !== null && !Array.isArray(node)
      ? Object.entries(node).flatMap(([k, v]) =>
          leaves(v, [...path, path[0] === 'plans' && path.length === 1 ? '<name>' : k]),
        )
      : [path.join('.')];
  for (const path of leaves(parse(defaults), [])) t.ok(documented.has(path), `${path} is documented`);
});

t.test('docs/configuration.md is the generated reference (npm run docs:config)', async (t) => {
  t.equal(readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8'), configReference(defaults));
});
