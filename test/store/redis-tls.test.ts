import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { consumeSpec, storedAccount } from '../helpers/accounts.js';
import { freePort, startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { DAY } from './contract/fixtures.js';

/** A throwaway CA and a server certificate for 127.0.0.1 it signed. */
function certificates(): { dir: string; ca: string } {
  const dir = tempDir('fpg-tls-');
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  execFileSync('sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1\\n" > san.ext'], { cwd: dir });
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'san.ext',
    '-out',
    'server.crt',
  );
  return { dir, ca: join(dir, 'ca.crt') };
}

t.test('rediss:// connects over TLS, verifying the server against the configured CA', async (t) => {
  const { dir, ca } = certificates();
  const tlsPort = await freePort();
  await startRedis(t, [
    '--tls-port',
    String(tlsPort),
    '--tls-cert-file',
    join(dir, 'server.crt'),
    '--tls-key-file',
    join(dir, 'server.key'),
    '--tls-ca-cert-file',
    ca,
    '--tls-auth-clients',
    'no',
  ]);
  const log = pino({ level: 'silent' });
  const options = (extra: Record<string, unknown>) =>
    loadConfig({
      env: {},
      overrides: { store: { redis: { url: `rediss://127.0.0.1:${tlsPort}`, connect_timeout_ms: 2000, ...extra } } },
    }).store.redis;

  const store = new RedisStore(options({ tls_ca_file: ca }), log);
  t.teardown(() => store.close());
  await t.resolves(store.ping(), 'TLS handshake and PING');
  t.match(
    await store.prices.putPriceSet(
      { effective_date: '2026-01-07', updated_at: '2026-01-07 00:01:00', coastal: region(), inland: region() },
      false,
    ),
    { effective_date: '2026-01-07' },
    'stored: the change is numbered',
  );
  const a = storedAccount({ label: 'tls' });
  await store.accounts.createAccount(a);
  t.same(
    await store.counting.consume(consumeSpec(a), DAY),
    { kind: 'ok', used: 1 },
    'a consume, on the consume connection of its own, over TLS too',
  );

  const untrusted = new RedisStore(options({}), log);
  t.teardown(() => untrusted.close());
  await t.rejects(untrusted.ping(), { code: 'STORE_UNAVAILABLE' }, 'a server the CA did not sign is refused');
  await t.rejects(
    untrusted.counting.consume(consumeSpec(a), DAY),
    { code: 'STORE_UNAVAILABLE' },
    'by the consume connection too',
  );
});

t.test('tls_ca_file needs a rediss:// url', async (t) => {
  t.throws(
    () => loadConfig({ env: {}, overrides: { store: { redis: { tls_ca_file: '/x.pem' } } } }),
    /store\.redis\.tls_ca_file: needs a rediss:\/\/ url/,
  );
});

function region() {
  return {
    zone: null,
    price_basis: 'official_regional_reference',
    petrol_93: null,
    petrol_95: '21.00',
    diesel_50ppm: null,
    diesel_500ppm: '20.00',
  };
}
