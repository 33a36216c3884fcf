import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/cli.js';
import { withoutFences } from '../helpers/doc-links.js';

// README.md and every page in docs/.
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

// Files the gateway writes or serves, which the pages name but the repository does not hold.
const NOT_IN_THE_REPOSITORY = new Set(['openapi.json', 'runner.json']);
const FILE = /\.(ts|md|ya?ml|json|conf|cfg|mjs|cjs|lua|service|sh|csv)$/;

/** The repository's files (tracked and new ones not ignored), and every folder that holds one. */
function repositoryFiles(): { files: string[]; names: Set<string> } {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const files = out.split('\n').filter((f) => f !== '' && existsSync(join(ROOT, f)));
  return { files, names: new Set(files.map((f) => basename(f))) };
}

/**
 * The file paths a page names in inline code: `src/http/metered/outcome.ts`, `http/metered/outcome.ts` (from
 * src/, as docs/architecture.md writes them), `store/<accounts|counting>/` (each alternative),
 * `features/<name>/index.ts` (any name), or a bare `outcome.ts`. URL paths (`/admin/...`),
 * commands and options are not files.
 */
function namedPaths(md: string): string[] {
  const code = [...withoutFences(md).matchAll(/(?<!`)`([^`\n]+)`(?!`)/g)].map((m) => m[1] as string);
  return code.filter(
    (c) =>
      /^[\w.<>|*-]+(\/[\w.<>|*-]+)*\/?$/.test(c) &&
      !c.startsWith('-') &&
      (FILE.test(c) || (c.includes('/') && /([\w-]{2,}|>)\/$/.test(c))),
  );
}

/**
 * The paths a page names, each as it resolves: a bare name after a path in the same paragraph
 * or table row is read in that path's folder (`admin/operations.ts`, `billing.ts` names
 * admin/billing.ts), as a reader reads it.
 */
function pagePaths(md: string): string[] {
  return withoutFences(md)
    .split(/\n\s*\n|\n(?=\|)/)
    .flatMap((paragraph) => {
      let folder = '';
      return namedPaths(paragraph).map((named) => {
        if (named.includes('/')) {
          folder = named.endsWith('/') ? named : `${dirname(named)}/`;
          return named;
        }
        // One at the top or in src/ (app.ts, package.json) is read there.
        const top = existsSync(join(ROOT, named)) || existsSync(join(ROOT, 'src', named));
        return folder === '' || folder.includes('<') || top ? named : `${folder}${named}`;
      });
    });
}

/** Whether `named` resolves: from the root, from src/, from the page's folder; a bare name anywhere. */
function resolves(named: string, page: string, repo: { files: string[]; names: Set<string> }): boolean {
  if (!named.includes('/')) return repo.names.has(named) || NOT_IN_THE_REPOSITORY.has(named);
  const bases = ['', 'src/', `${dirname(page)}/`.replace(/^\.\//, '')];
  // <a|b> stands for each of a and b, <name> and * for any one segment.
  const expand = (p: string): string[] => {
    const m = /<([^>]*\|[^>]*)>/.exec(p);
    if (m === null) return [p];
    return (m[1] as string).split('|').flatMap((alt) => expand(p.replace(m[0], alt)));
  };
  return expand(named).every((one) => {
    const pattern = new RegExp(
      `^${one
        .replace(/[.+?^${}()[\]\\]/g, '\\$&')
        .replace(/<[^>]*>|\*/g, '[^/]+')
        .replace(/\/$/, '/.+')}$`,
    );
    return bases.some((base) => repo.files.some((f) => f.startsWith(base) && pattern.test(f.slice(base.length))));
  });
}

t.test('every file path named in README.md and docs/ exists', async (t) => {
  const repo = repositoryFiles();
  let count = 0;
  for (const page of PAGES) {
    for (const named of pagePaths(readFileSync(join(ROOT, page), 'utf8'))) {
      // Written at run time or by the build, and ignored by git.
      if (named.startsWith('data/local/') || named.startsWith('dist/')) continue;
      count++;
      t.ok(resolves(named, page, repo), `${page}: \`${named}\` exists`);
    }
  }
  t.ok(count > 300, `${count} paths checked`);
});

t.test('the check fails on a path that moved, a missing alternative and a bare name found nowhere', async (t) => {
  const repo = repositoryFiles();
  const named = namedPaths(
    'See `http/metered/outcome.ts`, `src/http/metered/outcome.ts`, `store/<accounts|keys>/` and `features/<name>/index.ts`, ' +
      'not `/admin/accounts` nor `--config`. Moved: `keys/demo.ts`, `store/<accounts|nowhere>/`, `examples.ts`.',
  );
  t.same(named, [
    'http/metered/outcome.ts',
    'src/http/metered/outcome.ts',
    'store/<accounts|keys>/',
    'features/<name>/index.ts',
    'keys/demo.ts',
    'store/<accounts|nowhere>/',
    'examples.ts',
  ]);
  t.same(
    named.filter((n) => !resolves(n, 'docs/x.md', repo)),
    ['keys/demo.ts', 'store/<accounts|nowhere>/', 'examples.ts'],
  );
});
