import type { Test } from 'tap';
import { type GatewayProcess, gatewayProcess, privateConfig, runCli, storeTimeouts } from './cli.js';
import { startOrigin, type TestOrigin } from './origin.js';
import { startRedis } from './redis.js';
import { scaled, waitFor } from './wait.js';

/**
 * `n` gateway processes on one private Redis in front of a test origin passing `/origin/*`
 * through with the `upstream.cache` settings given, ready, and the key of an account with room
 * for 10,000,000 requests.
 */
export async function cacheGateways(
  t: Test,
  n: number,
  cache: Record<string, unknown> = {},
): Promise<{ origin: TestOrigin; gws: GatewayProcess[]; key: string; env: NodeJS.ProcessEnv }> {
  const redis = await startRedis(t);
  const origin = await startOrigin(t);
  const env = { REDIS_URL: redis.url };
  const config = privateConfig({
    upstream: {
      url: origin.url,
      api_key: origin.key,
      poll_interval_ms: 60_000,
      // Scaled, with the store's: at load 14 a 30,000-request flood had 7 answers fail.
      timeout_ms: scaled(5000),
      proxy_paths: ['/origin/*'],
      cache,
    },
    limits: { invalid_key_throttle: { max_attempts: 1000 } },
    store: { redis: storeTimeouts() },
  });
  const gws = await Promise.all(Array.from({ length: n }, () => gatewayProcess(t, config, env)));
  for (const gw of gws) await waitFor('ready', async () => (await fetch(`${gw.base}/readyz`)).status === 200, 20_000);
  const created = await runCli(['accounts', 'create', '--plan', 'enterprise', '--limit', '10000000'], env);
  t.equal(created.code, 0, `account created ${created.stderr.slice(-200)}`);
  return { origin, gws, key: (JSON.parse(created.stdout) as { api_key: string }).api_key, env };
}
