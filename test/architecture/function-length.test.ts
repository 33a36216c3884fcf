/**
 * No function in src/ is longer than 100 lines (issue 39): a long function is a table or a
 * dispatch that wants to be declared (admin/commands.ts) or split. The longest are listed, so
 * the figure is at hand when one grows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const MAX_LINES = 100;
const root = fileURLToPath(new URL('../../', import.meta.url));

interface Length {
  where: string;
  lines: number;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every function, method, arrow and accessor with a body: where it starts and how many lines it spans. */
function lengths(file: string): Length[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Length[] = [];
  const line = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = line(node.getStart(source));
      const name = 'name' in node && node.name !== undefined ? node.name.getText(source) : '(anonymous)';
      out.push({ where: `${relative(root, file)}:${start} ${name}`, lines: line(node.getEnd()) - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

t.test(`no function in src/ is over ${MAX_LINES} lines`, async (t) => {
  const all = sources(join(root, 'src'))
    .flatMap(lengths)
    .sort((a, b) => b.lines - a.lines);
  t.comment(
    `longest: ${all
      .slice(0, 5)
      .map((l) => `${l.where} (${l.lines})`)
      .join('; ')}`,
  );
  t.same(
    all.filter((l) => l.lines > MAX_LINES),
    [],
    'each is split or declared as a table',
  );
});
