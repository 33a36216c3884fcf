// The loader hooks behind register.mjs.
// - Sources import their siblings as `./x.js` (NodeNext), so a relative `.js` that does not exist
//   is looked up as `.ts`, as tsc resolves it.
// - A module of src/ is loaded from dist/ when dist/ is fresh (tap's `before` builds it once per
//   run): the gateways the tests start as child processes run dist/ too, so the in-process tests
//   and the children share one compiled form and one source map, and their coverage merges line
//   for line and function for function (two transpilers' maps give one function two locations).
//   It also spares each test process compiling src/. When dist/ is older than any source, every
//   file is compiled here instead: never a mix, which would load a module twice.
// - Anything else in TypeScript (the tests, their helpers) is transpiled by esbuild, with an
//   inline source map, and kept in node_modules/.cache/fpg-test-loader by its source's hash: a
//   run's 170 test processes import the same helpers, and a hit starts no esbuild at all.
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../../', import.meta.url);
const SRC = new URL('src/', ROOT).href;
const DIST = new URL('dist/', ROOT).href;
const TS = /\.[cm]?ts$/;

const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? Number.POSITIVE_INFINITY;

/** As test/helpers/build-dist.ts decides whether to build: dist/ newer than every input of the build. */
function distIsFresh() {
  const stamp = statSync(new URL('dist/.tsbuildinfo', ROOT), { throwIfNoEntry: false })?.mtimeMs;
  if (stamp === undefined) return false;
  const src = fileURLToPath(SRC);
  const inputs = readdirSync(src, { recursive: true, encoding: 'utf8' }).map((f) => new URL(f, SRC));
  return [...inputs, new URL('tsconfig.json', ROOT), new URL('package.json', ROOT)].every((u) => mtime(u) < stamp);
}

const FROM_DIST = process.env.FPG_TEST_FROM_SRC !== '1' && distIsFresh();

export async function resolve(specifier, context, nextResolve) {
  let found;
  try {
    found = await nextResolve(specifier, context);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.{1,2}\/.*\.[cm]?js$/.test(specifier)) throw error;
    found = await nextResolve(specifier.replace(/js$/, 'ts'), context);
  }
  if (FROM_DIST && found.url.startsWith(SRC) && found.url.endsWith('.ts'))
    return { ...found, url: `${DIST}${found.url.slice(SRC.length, -3)}.js`, format: 'module' };
  return found;
}

const CACHE = new URL('node_modules/.cache/fpg-test-loader/', ROOT);
const OPTIONS = { loader: 'ts', format: 'esm', target: `node${process.versions.node}`, sourcemap: 'inline' };

/** esbuild's output for `source` at `url`, from the cache when the same bytes were transpiled before. */
async function transpiled(url, source) {
  const key = createHash('sha256')
    .update(JSON.stringify(OPTIONS))
    .update(url)
    .update('\0')
    .update(source)
    .digest('hex');
  const cached = new URL(`${key}.js`, CACHE);
  try {
    return await readFile(cached, 'utf8');
  } catch {
    const { transform } = await import('esbuild');
    const { code } = await transform(source, { ...OPTIONS, sourcefile: fileURLToPath(url) });
    // Written aside and renamed: a process reading it concurrently sees all of it or none.
    const aside = new URL(`${key}.${process.pid}.tmp`, CACHE);
    await mkdir(CACHE, { recursive: true });
    await writeFile(aside, code);
    await rename(aside, cached);
    return code;
  }
}

export async function load(url, context, nextLoad) {
  if (!TS.test(url)) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  return { format: 'module', source: await transpiled(url, source), shortCircuit: true };
}
