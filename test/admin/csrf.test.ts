import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';

const SIMPLE = '/fuel-api/api/simple-current.php';

/** A raw request to the admin port, as a browser (or curl) would send it; answers the status. */
async function ask(port: number, method: string, path: string, headers: string[], body = ''): Promise<number> {
  const head = [
    `${method} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'Connection: close',
    ...(body !== '' ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    ...headers,
  ];
  const answer = await rawRequest(port, `${head.join('\r\n')}\r\n\r\n${body}`);
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
}

t.test('without a token, a cross-site page cannot rotate a key on the loopback admin API', async (t) => {
  const gw = await startGateway(t);
  const port = gw.app.adminAddress.port;
  const created = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const id = created.body.account.id as string;
  const key = created.body.api_key as string;
  const rotate = `/admin/accounts/${id}/rotate-key`;

  // What a form or fetch() on another site sends: an Origin, and a "simple" content type.
  t.equal(await ask(port, 'POST', rotate, ['Origin: https://evil.example', 'Content-Type: text/plain'], 'x'), 403);
  t.equal(await ask(port, 'POST', rotate, ['Origin: null', 'Content-Type: text/plain'], 'x'), 403);
  t.equal(await ask(port, 'POST', rotate, [`Origin: http://127.0.0.1:${port}`]), 403, 'any Origin at all');
  t.equal(await ask(port, 'GET', '/admin/prices', ['Origin: https://evil.example']), 403, 'reads too');
  t.equal(await ask(port, 'POST', rotate, ['Sec-Fetch-Site: cross-site']), 403);
  t.equal(await ask(port, 'POST', rotate, ['Sec-Fetch-Site: same-site']), 403);
  // No Origin (an old browser or a stripped one): the body's type alone is refused.
  t.equal(await ask(port, 'POST', rotate, ['Content-Type: text/plain'], 'x'), 415);
  t.equal(await ask(port, 'POST', rotate, ['Content-Type: application/x-www-form-urlencoded'], 'a=b'), 415);
  t.equal(await ask(port, 'POST', rotate, ['Content-Type: multipart/form-data; boundary=x'], '--x--'), 415);
  t.equal(await ask(port, 'POST', rotate, [], 'x'), 415, 'a body without a type');
  t.equal(await ask(port, 'POST', rotate, ['Content-Type: text/plain']), 415, 'a non-JSON type even when empty');
  // Fetch reads the last type of a list, so a page may send this one without a preflight.
  const listed = await ask(port, 'POST', rotate, ['Content-Type: application/json, text/plain'], 'x');
  t.equal(listed, 415, 'a list of types that a browser reads as text/plain');

  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 200, 'the key was never rotated');

  // What curl and scripts send still works.
  t.equal(await ask(port, 'GET', '/admin/prices', ['Sec-Fetch-Site: none']), 200, 'typed into the address bar');
  t.equal(await ask(port, 'GET', '/admin/prices', ['Sec-Fetch-Site: same-origin']), 200);
  t.equal(await ask(port, 'POST', rotate, []), 200, 'a bodiless POST, as curl -X POST sends it');
  t.equal((await gw.get(`${SIMPLE}?api_key=${key}`)).status, 401, 'and that one did rotate it');
  const json = await ask(port, 'POST', rotate, ['Content-Type: application/json'], '{}');
  t.equal(json, 200, 'a JSON body where none is read');
  const patched = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { label: 'ok' });
  t.equal(patched.status, 200, 'a JSON body where one is read');
});

t.test('with a token, a request with the token and an Origin is served as before', async (t) => {
  const token = 'Xy7-kQ2_mN9pL4vR8sT1wZ6bC3dF5gH0jK';
  const gw = await startGateway(t, { listen: { admin: { token } } });
  const port = gw.app.adminAddress.port;
  const status = await ask(port, 'GET', '/admin/prices', [
    `Authorization: Bearer ${token}`,
    'Origin: https://console.example',
  ]);
  t.equal(status, 200);
});
