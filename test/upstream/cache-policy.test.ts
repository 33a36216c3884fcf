import fc from 'fast-check';
import t from 'tap';
import { cacheKey, cacheKeyOf, freshness, normalPath, shareable } from '../../src/upstream/cache/policy.js';

const q = (s: string): URLSearchParams => new URLSearchParams(s);

t.test('the key: normal path, parameters sorted by name (repeats in order), api_key left out', async (t) => {
  t.equal(cacheKey('/v2/h.php', q('year=2025&api_key=K&month=3')), '/v2/h.php?month=3&year=2025');
  t.equal(cacheKey('/v2/h.php', q('b=2&a=1&b=1')), '/v2/h.php?a=1&b=2&b=1');
  t.equal(cacheKey('/v2/h.php', q('x=a%20b')), cacheKey('/v2/h.php', q('x=a+b')));
  t.not(cacheKey('/v2/h.php', q('x=1%26y%3D2')), cacheKey('/v2/h.php', q('x=1&y=2')));
  t.equal(cacheKey('/v2/h.php', q('')), '/v2/h.php?');
  t.equal(normalPath('/v2/%68%2f%2e%7e%3f%3F'), '/v2/h%2F%2E~%3F%3F', 'unreserved decoded, not `.`; others upper case');
});

t.test(
  'freshness: s-maxage before max-age, less Age; no-store, private, no-cache and lifetimes of 0 are not stored',
  async (t) => {
    t.same(freshness({ 'cache-control': 'max-age=60, s-maxage=120' }, 300), {
      freshMs: 120_000,
      ageMs: 0,
      mustRevalidate: false,
    });
    t.same(freshness({ 'cache-control': 'public, max-age="60"', age: '10' }, 300), {
      freshMs: 60_000,
      ageMs: 10_000,
      mustRevalidate: false,
    });
    t.same(freshness({}, 300), { freshMs: 300_000, ageMs: 0, mustRevalidate: false }, 'default_ttl_s without one');
    t.same(freshness({ 'cache-control': 'max-age=60, must-revalidate' }, 300)?.mustRevalidate, true);
    for (const cc of ['no-store', 'private', 'No-Cache', 'max-age=0', 'max-age=10'])
      t.equal(freshness({ 'cache-control': cc, age: '10' }, 300), null, cc);
    t.equal(freshness({}, 0), null, 'default_ttl_s 0: not stored');
    t.same(freshness({ 'cache-control': 'max-age=abc' }, 300)?.freshMs, 300_000, 'a bad max-age is no max-age');
  },
);

t.test('shareable: a 200 of JSON or uncompressed CSV, without Vary or Set-Cookie', async (t) => {
  t.equal(shareable(200, { 'content-type': 'application/json; charset=utf-8' }), 'json');
  t.equal(shareable(200, { 'content-type': 'application/problem+json' }), 'json');
  t.equal(shareable(200, { 'content-type': 'text/csv' }), 'csv');
  t.equal(shareable(200, { 'content-type': 'text/csv', 'content-encoding': 'gzip' }), null);
  t.equal(shareable(200, { 'content-type': 'text/html' }), null);
  t.equal(shareable(203, { 'content-type': 'application/json' }), null);
  t.equal(shareable(200, { 'content-type': 'application/json', vary: 'Accept' }), null);
  t.equal(shareable(200, { 'content-type': 'application/json', 'set-cookie': ['a=1'] }), null);
});

t.test('a hit takes the key from the raw query: the same key as from its parsed form, remembered or not', async (t) => {
  const part = fc.tuple(
    fc.constantFrom('a', 'b', 'api_key', 'x.y', '%61', 'a+b', 'k~', 'API_KEY', 'api_keys', ''),
    fc.constantFrom('', '=', '=1', '=v%20w', '=x+y', '=K', '=a=b', '=%26'),
  );
  const query = fc.array(part, { maxLength: 5 }).map((ps) => ps.map(([n, v]) => n + v).join('&'));
  fc.assert(
    fc.property(fc.constantFrom('/v2/h.php', '/v2/%68.php', '/a~b'), query, (path, search) => {
      const parsed = cacheKey(path, q(search));
      return cacheKeyOf(path, search) === parsed && cacheKeyOf(path, search) === parsed;
    }),
  );
  t.equal(cacheKeyOf('/v2/h.php', 'api_key=K1&year=2025'), cacheKeyOf('/v2/h.php', 'year=2025&api_key=K2'));
  t.equal(cacheKeyOf('/v2/h.php', 'api_key=K1&year=2025'), '/v2/h.php?year=2025', 'no caller key in the key');
  t.equal(
    cacheKeyOf(`/v2/${'x'.repeat(300)}`, 'a=1&api_key=K'),
    `/v2/${'x'.repeat(300)}?a=1`,
    'a long target is not kept, same key',
  );
});
