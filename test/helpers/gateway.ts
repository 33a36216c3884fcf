import { type App, type AppOptions, startApp } from '../../src/app.js';
import type { Config } from '../../src/config/config-schema.js';
import { loadConfig, merge } from '../../src/config/load.js';
import { createLogger } from '../../src/log/logger.js';
import { storeTimeouts } from './cli.js';
import type { TestContext } from './context.js';

export interface TestGateway {
  app: App;
  config: Config;
  base: string;
  /** Every log line written so far, as text. */
  logs(): string;
  get(path: string, init?: RequestInit): Promise<Response>;
}

/** Starts a gateway on a free loopback port with logs captured in memory; closed on teardown. */
export async function startGateway(
  t: TestContext,
  overrides: Record<string, unknown> = {},
  opts: AppOptions = {},
): Promise<TestGateway> {
  const config = loadConfig({
    env: {},
    overrides: merge(
      {
        listen: { public: { host: '127.0.0.1', port: 0 }, admin: { host: '127.0.0.1', port: 0 } },
        prices: { watch_file: false },
        // On Redis, the busy machine's timeouts (a test's own win): test files run their tests
        // side by side, and a start's connect or first command can take over the default 1 s.
        store: { memory: { file: '' }, redis: storeTimeouts() },
      },
      overrides,
    ),
  });
  const lines: string[] = [];
  // The production logger (its redaction and key scrubbing), writing to memory instead of stdout.
  const log = opts.log ?? createLogger('info', { write: (line: string) => void lines.push(line) });
  const app = await startApp(config, { ...opts, log });
  t.teardown(() => app.close());
  const base = `http://127.0.0.1:${app.publicAddress.port}`;
  return {
    app,
    config,
    base,
    logs: () => lines.join(''),
    get: (path, init) => fetch(base + path, init),
  };
}
