import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';

const refusal = (overrides: Record<string, unknown>): string => {
  try {
    loadConfig({ env: {}, overrides: { upstream: overrides } });
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

t.test('an empty upstream.url changes nothing; the environment sets the url and the key', async (t) => {
  t.equal(loadConfig({ env: {} }).upstream.url, '');
  const c = loadConfig({ env: { UPSTREAM_URL: 'https://fuel.example.com', UPSTREAM_API_KEY: 'k-123' } });
  t.equal(c.upstream.url, 'https://fuel.example.com');
  t.equal(c.upstream.api_key, 'k-123');
});

t.test('proxy_paths that would shadow the current endpoints or the probes are refused, naming the field', async (t) => {
  const base = { url: 'http://origin.test', api_key: 'k' };
  for (const entry of [
    '/fuel-api/api/current.php',
    '/fuel-api/api/simple-current.php',
    '/fuel-api/*',
    '/healthz',
    '/ready*',
    '/*',
    '/portal/api/keys',
    '/port*',
  ]) {
    t.match(
      refusal({ ...base, proxy_paths: [entry] }),
      /overrides: upstream\.proxy_paths\.0: would shadow/,
      `${entry} refused`,
    );
  }
  t.match(
    refusal({ ...base, proxy_paths: ['origin/x'] }),
    /upstream\.proxy_paths\.0: expected a path starting with "\/"/,
  );
  t.match(refusal({ ...base, proxy_paths: ['/a/../b'] }), /upstream\.proxy_paths\.0: expected a path without/);
  t.equal(
    refusal({ ...base, proxy_paths: ['/fuel-api/api/stations.php', '/fuel-api/api/historical.php', '/v2/*'] }),
    '',
    'other paths are fine',
  );
  t.match(refusal({ url: 'ftp://origin.test', api_key: 'k' }), /upstream\.url: expected an http/);
  t.match(refusal({ url: 'http://origin.test' }), /upstream\.api_key: required when upstream\.url is set/);
  t.match(refusal({ proxy_paths: ['/v2/*'] }), /upstream\.proxy_paths: needs upstream\.url/);
  t.match(refusal({ ...base, poll_interval_ms: 0 }), /upstream\.poll_interval_ms/);
});

t.test('config check validates the upstream keys and masks the service key', async (t) => {
  const r = await runCli(['config', 'check'], {
    UPSTREAM_URL: 'http://origin.test',
    UPSTREAM_API_KEY: 'very-secret-origin-key',
  });
  t.equal(r.code, 0, r.stderr);
  t.notMatch(r.stdout, 'very-secret-origin-key');
  t.match(JSON.parse(r.stdout).upstream, {
    url: 'http://origin.test',
    api_key: '***',
    poll_interval_ms: 60000,
    timeout_ms: 5000,
    proxy_paths: [],
  });
  const bad = await runCli(['config', 'check'], { UPSTREAM_URL: 'http://origin.test' });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /upstream\.api_key: required/);
});

t.test(
  'upstream.cache: defaults for a fuel-price origin; a per-path default_ttl_s names a proxy_paths entry',
  async (t) => {
    const c = loadConfig({ env: {} }).upstream.cache;
    t.same(c, {
      default_ttl_s: 300,
      paths: {},
      stale_while_revalidate_s: 60,
      stale_if_error_s: 86400,
      max_bytes: 64 << 20,
      max_entry_bytes: 1 << 20,
      purge_on_prices: true,
    });
    const base = { url: 'http://origin.test', api_key: 'k', proxy_paths: ['/v2/*'] };
    t.equal(refusal({ ...base, cache: { paths: { '/v2/*': { default_ttl_s: 3600 } } } }), '');
    t.match(
      refusal({ ...base, cache: { paths: { '/v3/*': { default_ttl_s: 3600 } } } }),
      /upstream\.cache\.paths\.\/v3\/\*: expected an entry of proxy_paths/,
    );
    t.match(refusal({ ...base, cache: { paths: { '/v2/*': { ttl: 1 } } } }), /upstream\.cache\.paths/);
    t.match(
      refusal({ ...base, cache: { max_bytes: 1000, max_entry_bytes: 2000 } }),
      /max_entry_bytes: expected at most max_bytes/,
    );
    t.equal(refusal({ ...base, cache: { max_bytes: 0 } }), '', 'max_bytes 0: no cache');
    t.match(refusal({ ...base, cache: { default_ttl_s: -1 } }), /upstream\.cache\.default_ttl_s/);
    t.match(refusal({ ...base, cache: { purge_on_price: true } }), /purge_on_price/);
  },
);
