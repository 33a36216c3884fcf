import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * The link check of README.md and docs/*.md: every link must stay inside the repository and land
 * on a file that exists, and on a heading of it when it names one. Anchors are computed as GitHub
 * renders them, since that is where the pages are read.
 */

/** Markdown with fenced code blocks blanked out (line for line): they hold no headings or links. */
export function withoutFences(md: string): string {
  let fence: string | null = null;
  return md
    .split('\n')
    .map((line) => {
      const open = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence !== null) {
        // A fence closes with at least as many of the same character.
        if (open?.startsWith(fence)) fence = null;
        return '';
      }
      if (open === undefined) return line;
      fence = open;
      return '';
    })
    .join('\n');
}

/** Prose only: fenced blocks and inline code spans removed (`[x](y)` inside backticks is no link). */
export function prose(md: string): string {
  return withoutFences(md).replace(/(`+)[\s\S]*?[^`]\1(?!`)/g, '');
}

/**
 * GitHub's anchor for a heading: its text (a link counts as its text), lower case, with every
 * character that is not a letter, digit, space, hyphen or underscore removed, and each space made
 * a hyphen. GitHub keeps underscores (`max_age_days`), so we do too.
 */
export function anchorOf(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page, in order; a repeated heading gets -1, -2 … as on GitHub. */
export function anchorsOf(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text] of withoutFences(md).matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const base = anchorOf(text as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every link target of a page: inline links and images, reference definitions, autolinks, bare URLs, HTML. */
export function linkTargets(md: string): string[] {
  const text = prose(md);
  const patterns = [
    /\]\(\s*<?([^)\s>]*)>?/g, // [text](target), ![alt](target)
    /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm, // [label]: target
    /<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi, // <https://…>
    /(?<![(<"'/\w])((?:https?:\/\/|www\.)[^\s)>\]]+)/gi, // a bare URL, which GitHub links too
    /\b(?:href|src)\s*=\s*["']([^"']+)["']/gi, // <a href="…">, <img src="…">
  ];
  // In the order they appear, so problems read top to bottom.
  return patterns
    .flatMap((p) => [...text.matchAll(p)].map((m) => ({ at: m.index, target: m[1] as string })))
    .sort((a, b) => a.at - b.at)
    .map((l) => l.target);
}

/**
 * What is wrong with the links of `page` (a path relative to `root`), one line each; none when
 * all is well. `text` defaults to the page's contents.
 */
export function linkProblems(root: string, page: string, text = readFileSync(join(root, page), 'utf8')): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    const say = (why: string) => problems.push(`${page}: (${target}) ${why}`);
    if (/^[a-z][a-z0-9+.-]*:|^\/\/|^www\./i.test(target)) {
      say('leaves the repository');
      continue;
    }
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const fragment = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
    // GitHub reads a leading / as the repository's root, anything else from the page's folder.
    const file =
      pathPart === ''
        ? join(root, page)
        : pathPart.startsWith('/')
          ? join(root, pathPart)
          : resolve(root, dirname(page), pathPart);
    const inside = relative(root, file);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      say('leaves the repository');
      continue;
    }
    if (!existsSync(file)) {
      say(`names a missing file, ${inside}`);
      continue;
    }
    if (fragment === null) continue;
    if (!file.endsWith('.md') || statSync(file).isDirectory()) {
      say(`names a heading in ${inside}, which is not a Markdown page`);
      continue;
    }
    // A link within the page reads the text being checked, which may not be on disk yet.
    const headings = anchorsOf(pathPart === '' ? text : readFileSync(file, 'utf8'));
    if (!headings.has(fragment)) say(`names a missing heading, #${fragment} of ${inside}`);
  }
  return problems;
}
