import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

t.test('the README stands on its own: no documents outside the repository', async (t) => {
  t.notMatch(readme, /PRODUCT\.md|\.\.\/shared|\bthe spec\b|spec's/i);
  for (const [, path] of readme.matchAll(
    /`((?:src|test|data|deploy|config|bench|docs)\/[\w./-]+\.(?:ts|md|yaml|json|conf|mjs))`/g,
  )) {
    if (!(path as string).startsWith('data/local/')) t.ok(existsSync(join(ROOT, path as string)), `${path} exists`);
  }
});

t.test('the README carries exactly the two set-up commands', async (t) => {
  const blocks = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((m) => (m[1] as string).trim());
  t.equal(blocks[0], 'npm install && npm start');
  t.equal(blocks[1], 'npm test');
});

t.test('the README says what the price fields are', async (t) => {
  t.match(readme, /pump \(retail\)\*\* price/);
  t.match(readme, /\*\*wholesale list\*\* price/);
  t.match(readme, /`price_basis` is `"official_regional_reference"`/);
  t.match(readme, /`zone` is `null`/);
});
