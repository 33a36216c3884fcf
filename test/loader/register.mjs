// tap's --import: TypeScript test and source files transpiled by esbuild, one file at a time, with
// an inline source map so that coverage lands on the .ts lines. ts-node (tap's default loader) spent
// about 8 s of CPU per test file resolving and compiling; esbuild does the same work in a fraction.
// Types are checked once per run by `npm run typecheck`, never here.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
