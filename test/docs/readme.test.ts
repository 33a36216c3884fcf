import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';
import { anchorOf, anchorsOf, linkProblems } from '../helpers/doc-links.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
// README.md and every page beside it in docs/: all are read on their own, so all are checked.
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

for (const page of PAGES) {
  t.test(`${page} stands on its own: no documents outside the repository`, async (t) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    t.notMatch(text, /PRODUCT\.md|\.\.\/shared|\bthe spec\b|spec's/i);
    for (const [, path] of text.matchAll(
      /`((?:src|test|data|deploy|config|bench|docs)\/[\w./-]+\.(?:ts|md|yaml|json|conf|mjs))`/g,
    )) {
      if (!(path as string).startsWith('data/local/')) t.ok(existsSync(join(ROOT, path as string)), `${path} exists`);
    }
  });

  t.test(`${page}: every link stays in the repository and lands on a file and heading`, async (t) => {
    t.same(linkProblems(ROOT, page), []);
  });
}

t.test('the README is a short page with a table of links, one page per topic in docs/', async (t) => {
  // Issue 21: a newcomer reads it in ten minutes; the rest lives in docs/.
  t.ok(readme.split('\n').length - 1 <= 250, `README.md has ${readme.split('\n').length - 1} lines, at most 250`);
  for (const page of ['architecture', 'api', 'operations', 'deployment', 'security', 'performance', 'configuration']) {
    t.ok(PAGES.includes(`docs/${page}.md`), `docs/${page}.md`);
    t.match(readme, `](docs/${page}.md)`, `the README links docs/${page}.md`);
  }
});

t.test('anchors are computed as GitHub renders them', async (t) => {
  t.equal(anchorOf('Trusting the balancer, and nothing else'), 'trusting-the-balancer-and-nothing-else');
  t.equal(anchorOf('The balancer: deploy/haproxy.cfg'), 'the-balancer-deployhaproxycfg');
  t.equal(anchorOf('Without Docker: `npm run topology`'), 'without-docker-npm-run-topology');
  t.equal(anchorOf('What the topology tests prove (test/topology)'), 'what-the-topology-tests-prove-testtopology');
  t.equal(anchorOf('Plans, periods and keys'), 'plans-periods-and-keys');
  t.equal(anchorOf('`max_age_days` and [the page](x.md)'), 'max_age_days-and-the-page');
  t.equal(anchorOf('Memory – 10,000 accounts'), 'memory--10000-accounts');
  t.same([...anchorsOf('# A\n\n```\n# not a heading\n```\n## A\n### B ##\n')], ['a', 'a-1', 'b']);
});

t.test('the link check fails on every kind of broken link', async (t) => {
  const root = t.testdir({
    'README.md': '# Top\n\n## Run it\n',
    'code.ts': '',
    docs: { 'api.md': '# API\n\n## Errors\n\nSee [run](../README.md#run-it) and [errors](#errors).\n' },
  });
  t.same(linkProblems(root, 'docs/api.md'), [], 'good links pass');
  const bad = [
    '[a](docs/api.md#no-such-heading)',
    '[b](docs/missing.md)',
    '[c](https://example.com/x)',
    '<https://example.com/y>',
    'and a bare https://example.com/z',
    '[d](../outside.md)',
    '[e](#nowhere)',
    '![f](docs/missing.png)',
    '[g](code.ts#L1)',
    '[h]: docs/gone.md',
  ];
  const problems = linkProblems(root, 'README.md', `# Top\n\n${bad.join('\n\n')}\n`);
  t.equal(problems.length, bad.length, problems.join('\n'));
  t.match(problems, [
    /docs\/api\.md#no-such-heading\) names a missing heading, #no-such-heading of docs\/api\.md/,
    /docs\/missing\.md\) names a missing file/,
    /leaves the repository/,
    /leaves the repository/,
    /leaves the repository/,
    /\.\.\/outside\.md\) leaves the repository/,
    /#nowhere\) names a missing heading/,
    /missing\.png\) names a missing file/,
    /not a Markdown page/,
    /gone\.md\) names a missing file/,
  ]);
  t.same(
    linkProblems(root, 'README.md', '# Top\n\n```\n[x](nowhere.md) https://example.com\n```\n`[y](nowhere.md)`\n'),
    [],
    'code is no link',
  );
});

t.test('the README carries exactly the two set-up commands', async (t) => {
  const blocks = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((m) => (m[1] as string).trim());
  t.equal(blocks.length, 2, 'no other sh block');
  t.equal(blocks[0], 'npm install && npm start');
  t.equal(blocks[1], 'npm test');
});

t.test('the README says what the price fields are', async (t) => {
  t.match(readme, /pump \(retail\)\*\* price/);
  t.match(readme, /\*\*wholesale list\*\* price/);
  t.match(readme, /`price_basis` is `"official_regional_reference"`/);
  t.match(readme, /`zone` is `null`/);
});

t.test(
  "the README says the shipped history ends with the last sourced set, so a first start's stale warning is expected",
  async (t) => {
    const dates = readdirSync(join(ROOT, 'data/prices'))
      .filter((f) => f.endsWith('.json'))
      .flatMap(
        (f) => JSON.parse(readFileSync(join(ROOT, 'data/prices', f), 'utf8')) as Array<{ effective_date: string }>,
      )
      .map((s) => s.effective_date)
      .sort();
    const last = new Date(`${dates.at(-1)}T00:00:00Z`);
    const month = `${last.toLocaleString('en', { month: 'long', timeZone: 'UTC' })} ${last.getUTCFullYear()}`;
    const prices = readme.slice(
      readme.indexOf('### What the prices are'),
      readme.indexOf('\n## ', readme.indexOf('### What the prices are')),
    );
    const line = prices.split('\n- ').find((item) => item.includes(month));
    t.ok(line, `where it describes the shipped prices, the README names the last shipped set (${month})`);
    t.match(line ?? '', '`prices publish`', 'and how an operator publishes newer sets: the CLI');
    t.match(line ?? '', 'PUT /admin/prices', 'or the admin API');
    t.match(line ?? '', /stale/, 'and that the warning about stale prices is expected');
  },
);
