/**
 * What the pages claim is what the gateway does: docs/api.md's FuelSA-compatible example is what a
 * gateway serving the shipped prices really answers (a figure null in the shipped data is never
 * shown as served), and no page states a log-scrubbing rule other than the one in force.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';
import { ManualClock } from '../helpers/clock.js';
import { newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

/** The first JSON block of the page's section headed `heading`. */
function exampleOf(page: string, heading: string): string {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const section = text.slice(text.indexOf(`\n## ${heading}\n`));
  const block = /```json\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error(`no JSON example under ${heading}`);
  return block[1];
}

t.test(
  "docs/api.md's FuelSA-compatible example is the real answer of /exapi/fuel/current while its set was in effect",
  async (t) => {
    const example = exampleOf('docs/api.md', 'FuelSA-compatible routes');
    let shown: unknown;
    t.doesNotThrow(() => {
      shown = JSON.parse(example);
    }, 'the example is a whole answer, not elided');
    const at = Date.parse('2025-05-20T09:30:00+02:00');
    const gw = await startGateway(t, {}, { clock: new ManualClock(at) });
    const { api_key: key } = await newAccount(gw, { plan: 'developer' }, at);
    const r = await gw.get('/exapi/fuel/current', { headers: { key } });
    t.equal(r.status, 200);
    t.same(shown, await r.json(), 'every item shown is served, with the value served, and none is missing');
  },
);

t.test(
  'no page states a length rule for keys in logs: the rule is src/log/scrub.ts, as docs/security.md says',
  async (t) => {
    // A length rule ("any run of 24 or more characters") was replaced: file names, event ids and
    // hashes are logged as they are. A page still saying otherwise misleads whoever reads its logs.
    for (const page of ['README.md', 'docs/deployment.md', 'docs/security.md', 'docs/operations.md', 'docs/api.md']) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      t.notMatch(text, /run of \d+ or more/i, `${page} states no length rule`);
    }
    t.match(readFileSync(join(ROOT, 'docs/security.md'), 'utf8'), '**Keys in logs: the rule.**');
  },
);
