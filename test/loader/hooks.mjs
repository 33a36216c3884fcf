// The loader hooks behind register.mjs. Sources import their siblings as `./x.js` (NodeNext), so a
// relative `.js` that does not exist is looked up as `.ts`, as tsc resolves it.
import { readFile } from 'node:fs/promises';
import { transform } from 'esbuild';

const TS = /\.[cm]?ts$/;

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.{1,2}\/.*\.[cm]?js$/.test(specifier)) throw error;
    return nextResolve(specifier.replace(/js$/, 'ts'), context);
  }
}

export async function load(url, context, nextLoad) {
  if (!TS.test(url)) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const { code } = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: new URL(url).pathname,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
