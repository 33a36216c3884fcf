// The rows of `npm run bench` beside the metered variants: refusals (a malformed-key flood, a scan
// of distinct made-up keys, a blocked address's flood) and the path through HAProxy against the
// same gateway served directly. Each builds targets for run.mjs's alternating rounds.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { child, family, freePort, until } from './lib.mjs';

const SIMPLE = '/fuel-api/api/simple-current.php?api_key=';

/** `count` keys of the right shape whose checksum fails: refused without a lookup. */
function malformedKeys(count, file) {
  const keys = Array.from({ length: count }, () => `fpg_${randomBytes(29).toString('base64url').slice(0, 38)}`);
  writeFileSync(file, `${keys.join('\n')}\n`);
  return file;
}

/** `count` well-formed keys (the checksum holds) that no account has: a scanner's guesses. */
async function unknownKeys(count, file) {
  const { generateKey } = await import('../dist/keys/key-generator.js');
  writeFileSync(file, `${Array.from({ length: count }, generateKey).join('\n')}\n`);
  return file;
}

/**
 * Refusal floods on a Redis gateway with its access log on, each on a gateway of its own so one
 * flood's leftovers do not weigh on the next: malformed keys, a scan of distinct well-formed
 * unknown keys (more than the negative cache holds or a round sends, so none is cached when it
 * comes round again), and the scan from an address already blocked.
 */
export async function refusalTargets({ dir, startGateway, redisUrl, variants, scanKeys }) {
  const malformed = malformedKeys(10_000, join(dir, 'malformed.keys'));
  const unknown = await unknownKeys(scanKeys, join(dir, 'unknown.keys'));
  const targets = [];
  for (const v of variants) {
    const open = { limits: { invalid_key_throttle: { max_attempts: 1_000_000_000 } } };
    // A block is announced to every gateway on the Redis: this one keeps its own key prefix (and
    // so its own channel), or the address would be blocked on every other row too.
    const shut = {
      store: { type: 'redis', redis: { url: redisUrl, key_prefix: `fpg-blocked-${v.id}:` } },
      limits: { invalid_key_throttle: { max_attempts: 3, window_s: 60, block_s: 86_400 } },
    };
    const flood = await startGateway({ ...v, id: `${v.id}-refusals` }, redisUrl, [], undefined, open);
    const scan = await startGateway({ ...v, id: `${v.id}-scan` }, redisUrl, [], undefined, open);
    const blocked = await startGateway({ ...v, id: `${v.id}-blocked` }, redisUrl, [], undefined, shut);
    for (let i = 0; i < 3; i++) await (await fetch(`${blocked.base}${SIMPLE}blocking-${i}`)).arrayBuffer();
    await until('the address blocked', async () => (await fetch(`${blocked.base}${SIMPLE}x`)).status === 429);
    const row = (gw, label, keysFile) => ({
      label: `${v.label}: ${label}`,
      endpoint: 'simple',
      base: gw.base,
      prefix: SIMPLE,
      keysFile,
      pids: family(gw.pid),
      redis: true,
      logFile: gw.logFile,
      refusal: true,
      runs: [],
    });
    targets.push(
      { ...row(flood, 'malformed-key flood', malformed), answersKeys: true },
      { ...row(scan, 'unknown-key scan (distinct keys)', unknown), perRound: true },
      row(blocked, 'blocked-address flood', unknown),
    );
  }
  return targets;
}

/**
 * A Redis gateway (log on) behind HAProxy with the shipped balancer config (deploy/haproxy.cfg,
 * filled in as `npm run topology` fills it), and the same gateway served directly: the row
 * through the balancer carries its ratio to the direct one.
 */
export async function haproxyTargets({ dir, startGateway, redisUrl, variants, keysFile }) {
  const { fillServers, haproxyBinary } = await import('../dist/topology/haproxy.js');
  const targets = [];
  for (const v of variants) {
    const gw = await startGateway({ ...v, id: `${v.id}-lb` }, redisUrl);
    const cfg = join(dir, `${v.id}-haproxy.cfg`);
    writeFileSync(cfg, fillServers(readFileSync('deploy/haproxy.cfg', 'utf8'), [Number(new URL(gw.base).port)]));
    const port = await freePort();
    const lb = child(
      haproxyBinary(),
      ['-f', cfg, '-db'],
      { env: { ...process.env, FPG_LB_BIND: `127.0.0.1:${port}`, FPG_LB_SOCKET: join(dir, `${v.id}-haproxy.sock`) } },
      'load',
    );
    const base = `http://127.0.0.1:${port}`;
    await until('balancer → gateway', async () => (await fetch(`${base}/readyz`)).ok);
    const common = {
      endpoint: 'simple',
      prefix: SIMPLE,
      keysFile,
      pids: family(gw.pid),
      redis: true,
      logFile: gw.logFile,
    };
    const direct = { ...common, label: `${v.label}, simple, direct`, base: gw.base, answersKeys: true, runs: [] };
    targets.push(direct, {
      ...common,
      label: `${v.label}, simple, through HAProxy`,
      base,
      lbPid: lb.pid,
      reference: direct,
      runs: [],
    });
  }
  return targets;
}

export const haproxyVersion = async () => {
  const { haproxyBinary } = await import('../dist/topology/haproxy.js');
  return execFileSync(haproxyBinary(), ['-v']).toString().split(' ')[2];
};
