import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';

// RFC 9110 §11.6.1: challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ], auth-param = token BWS "=" BWS ( token / quoted-string )
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const PARAM = `${TOKEN}="[^"\\\\]*"`;
const CHALLENGE = new RegExp(`^(${TOKEN}) (${PARAM}(?:, ${PARAM})*)$`);

t.test('every 401 carries a WWW-Authenticate challenge naming the header and the query parameter', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key: inactive } = await newAccount(gw, { plan: 'starter', status: 'inactive' });
  const paths = [
    '/fuel-api/api/simple-current.php',
    '/fuel-api/api/current.php?api_key=nope',
    `/fuel-api/api/historical.php?api_key=fpg_${'A'.repeat(38)}&month=1&year=2025`,
    '/fuel-api/api/usage.php',
  ];
  for (const path of paths) {
    const r = await gw.get(path, { method: path.includes('usage') ? 'HEAD' : 'GET' });
    t.equal(r.status, 401, path);
    const value = r.headers.get('www-authenticate') ?? '';
    const m = CHALLENGE.exec(value);
    t.ok(m, `a valid challenge: ${value}`);
    t.equal(m?.[1], 'ApiKey');
    const params = Object.fromEntries(
      [...(m?.[2] ?? '').matchAll(new RegExp(`(${TOKEN})="([^"]*)"`, 'g'))].map((p) => [p[1], p[2]]),
    );
    t.same(params, { realm: 'fuel-api', header: 'X-API-Key', query: 'api_key' });
  }
  const forbidden = await gw.get(`/fuel-api/api/simple-current.php?api_key=${inactive}`);
  t.equal(forbidden.status, 403);
  t.equal(forbidden.headers.get('www-authenticate'), null, 'only on 401');
});
