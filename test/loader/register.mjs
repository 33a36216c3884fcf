// tap's --import: TypeScript test and source files transpiled by esbuild, one file at a time, with
// an inline source map so that coverage lands on the .ts lines. ts-node (tap's default loader) spent
// about 8 s of CPU per test file resolving and compiling; esbuild does the same work in a fraction.
// Types are checked once per run by `npm run typecheck`, never here.
import { register } from 'node:module';
import { Agent, setGlobalDispatcher } from 'undici';

register('./hooks.mjs', import.meta.url);

// The tests' fetch lets an idle connection go after 1 s. By default undici keeps one until a second
// before the server's advertised 5 s, on a timer that ticks once a second; beside the bench a POST
// went out on a socket the gateway had just closed as idle, and a POST is not retried
// (portal/webhooks-page: fetch failed, ECONNRESET). The gateway's own keep-alive is its setting.
setGlobalDispatcher(new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 }));
