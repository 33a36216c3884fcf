import { connect } from 'node:net';
import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { githubSigner, match, postReport, SECRET_SCANNING } from '../helpers/secret-scanning.js';
import { scaled } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const S = '/fuel-api/api/simple-current.php';

async function setup(t: Parameters<typeof startGateway>[0]) {
  const github = githubSigner();
  const gw = await startGateway(t, {
    demo_accounts: false,
    // Scaled: beside the bench (load 13) a whole request sent at once was answered 408 at 1.5 s.
    server: { request_timeout_ms: scaled(1500), headers_timeout_ms: scaled(1000) },
    secret_scanning: { public_keys: [github.publicKey] },
  });
  const { body } = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const works = async (): Promise<boolean> =>
    (await gw.get(S, { headers: { 'X-API-Key': body.api_key } })).status === 200;
  return { github, gw, port: gw.app.publicAddress.port, key: body.api_key as string, works };
}

const head = (headers: Record<string, string | number>): string =>
  `POST ${SECRET_SCANNING} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;

t.test('raw sockets: oversized, lying and stalled report bodies are refused and the key is untouched', async (t) => {
  const { github, port, key, works } = await setup(t);
  const signed = github.headers(JSON.stringify([match(key)]));

  // 2 MiB chunked, no length announced: cut at 1 MiB, 413, the connection closed.
  const chunk = 'x'.repeat(64 * 1024);
  const chunks = Array.from({ length: 32 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
  const chunked = await rawRequest(port, `${head({ ...signed, 'Transfer-Encoding': 'chunked' })}${chunks}0\r\n\r\n`);
  t.match(chunked, /^HTTP\/1\.1 413 /);
  t.match(chunked, /\r\nConnection: close\r\n/i);
  t.match(chunked, /Report too large \(at most 1 MiB\)\./);

  // A length over the bound is refused before a byte of the body is read.
  const announced = await rawRequest(port, head({ ...signed, 'Content-Length': 5_000_000 }));
  t.match(announced, /^HTTP\/1\.1 413 /);
  // No signature, and a body that goes on: 401 at once, and the connection closed unread.
  const unsigned = await rawRequest(port, `${head({ 'Content-Length': 5_000_000 })}${'x'.repeat(100_000)}`);
  t.match(unsigned, /^HTTP\/1\.1 401 /);
  t.match(unsigned, /\r\nConnection: close\r\n/i);

  // A body that stops halfway: the request times out, nothing is acted on.
  const started = Date.now();
  const stalled = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    socket.on('data', (c) => got.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(Buffer.concat(got).toString()));
    socket.write(`${head({ ...signed, 'Content-Length': 500 })}[{"token":"${key.slice(0, 10)}`);
  });
  t.ok(Date.now() - started < scaled(4000), `the stalled request is ended (${Date.now() - started} ms)`);
  t.notMatch(stalled, /^HTTP\/1\.1 200/);

  // The signature headers twice (joined by the parser): not a signature.
  const doubled = head({ ...signed, 'Content-Length': 0, Connection: 'close' }).replace(
    '\r\n\r\n',
    `\r\nGithub-Public-Key-Signature: ${signed['Github-Public-Key-Signature']}\r\n\r\n`,
  );
  t.match(await rawRequest(port, doubled), /^HTTP\/1\.1 401 /);

  t.ok(await works(), 'the key still works after all of them');
});

t.test('a full report of 1000 unknown keys of our shape is answered, every one false_positive', async (t) => {
  const { github, gw, works } = await setup(t);
  const body = JSON.stringify(Array.from({ length: 1000 }, () => match(generateKey())));
  const started = Date.now();
  const r = await postReport(gw, body, github.headers(body));
  const took = Date.now() - started;
  t.equal(r.status, 200);
  t.equal((r.json as Array<{ label: string }>).filter((l) => l.label === 'false_positive').length, 1000);
  t.ok(took < scaled(5000), `answered in ${took} ms`);
  t.ok(await works(), 'the gateway still serves');
});

t.test(
  'a report with no signature, or an empty one, is refused at its headers: 401 before its body is read, nothing revoked',
  async (t) => {
    const { github, gw, port, key, works } = await setup(t);
    const body = JSON.stringify([match(key)]);
    const { 'Github-Public-Key-Signature': _signature, ...unsigned } = github.headers(body);
    const cases: Array<[string, Record<string, string>]> = [
      ['no signature header', unsigned],
      ['an empty signature header', { ...unsigned, 'Github-Public-Key-Signature': '' }],
    ];
    for (const [what, headers] of cases) {
      // The whole body is announced and only its first bytes sent: only the headers can be answered.
      const answer = await rawRequest(
        port,
        `${head({ ...headers, 'Content-Length': body.length })}${body.slice(0, 10)}`,
      );
      t.match(answer, /^HTTP\/1\.1 401 /, `${what}: 401`);
      t.match(answer, /\r\nConnection: close\r\n/i, `${what}: the body is not waited for`);
      t.match(answer, /\{"success":false,"message":"Invalid or missing report signature\."\}$/, what);
      const whole = await postReport(gw, body, headers);
      t.equal(whole.status, 401, `${what}, the whole body sent: 401`);
    }
    t.ok(await works(), 'the reported key still works');
    t.notOk(gw.logs().includes('"admin key.leak"'), 'no leak was acted on');
  },
);
