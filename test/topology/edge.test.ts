import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { tempDir } from '../helpers/tmp.js';
import { load, SIMPLE, sleep, startTopology, until } from '../helpers/topology.js';

// One topology for the scenarios at the edge: what a client can do through the public port.
const dir = tempDir('fpg-tls-');
execFileSync('openssl', [
  ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
  ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
  ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
]);
const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
writeFileSync(join(dir, 'gateway.pem'), cert + readFileSync(join(dir, 'key.pem'), 'utf8'));

const topo = await startTopology(t, ['--tls-cert', join(dir, 'gateway.pem'), '--tls-port', '0']);
const { ready } = topo;

t.test(
  'exact through the balancer: 300 parallel requests on a limit of 100 get exactly 100 answers 200, spread over the gateways',
  async (t) => {
    const { id, key } = await topo.account('developer');
    const before = await Promise.all(ready.gateways.map((_, i) => topo.served(i)));
    const result = await load(`${ready.public}${SIMPLE}`, key, 50, { count: 300 });
    t.equal(result.sent, 300);
    t.equal(result.errors, 0, 'every request answered');
    t.equal(result.ok(), 100, 'exactly the allowance succeeds');
    t.equal(result.statuses.get(429), 200, 'the rest are refused');
    t.equal(await topo.used(id), 100);
    // Each gateway's own count, which does not lag as its access log does.
    const served = await Promise.all(
      ready.gateways.map(async (_, i) => (await topo.served(i)) - (before[i] as number)),
    );
    t.ok(
      served.every((n) => n > 0),
      `every gateway served some (${served.join(', ')})`,
    );
  },
);

t.test('a spoofed X-Forwarded-For through the balancer: the client is throttled by its real address', async (t) => {
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) {
    const res = await fetch(`${ready.public}${SIMPLE}?api_key=fpg_made-up-${i}`, {
      headers: { 'x-forwarded-for': `10.1.2.${i}, 192.168.7.${i}` },
    });
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  // Each gateway reports a bad key to Redis after answering it, and the block reaches the others
  // by pub/sub: a request or two may pass on another gateway before it knows (at most one report
  // in flight per gateway). Without the fix every one of the 30 got 401.
  const refused = statuses.filter((s) => s === 401).length;
  t.ok(refused >= 20 && refused <= 20 + ready.gateways.length, `${refused} bad keys answered 401 before the block`);
  t.ok(statuses.includes(429), 'then 429, whatever address each request claimed');
  // Time for the block to reach every gateway by pub/sub: a probe would be a bad key of its own.
  await sleep(500);
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${ready.public}${SIMPLE}?api_key=fpg_made-up-again-${i}`, {
      headers: { 'x-forwarded-for': `172.16.9.${i}` },
    });
    await res.arrayBuffer();
    t.equal(res.status, 429, `a later bad key claiming 172.16.9.${i} is refused on whichever gateway it reaches`);
  }
});

t.test('TLS is terminated at the balancer when a certificate is mounted', async (t) => {
  const { key } = await topo.account('starter');
  // The test before left this client's address blocked: a new key gets in as one well-formed key
  // a second does, the first a second after the block began.
  await sleep(1000);
  t.ok(ready.public_tls, 'the ready line names the TLS endpoint');
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpsRequest(`${ready.public_tls}${SIMPLE}`, { ca: cert, headers: { 'x-api-key': key } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(answer.status, 200);
  t.match(JSON.parse(answer.body), { success: true, usage: { requests_used: 1 } });
});

t.test('no key in any log: keys sent in every position appear in no file of lb.logs or gateways[].logs', async (t) => {
  const { key } = await topo.account('business');
  const body = key.slice(4);
  const encoded = [...key].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const targets = [
    `${SIMPLE}?api_key=${key}`,
    `${SIMPLE}?key=${key}`,
    `${SIMPLE}?apikey=${key}&api_key=${key}`,
    `/fuel-api/api/${key}`,
    `/fuel-api/api/simple-current.php/${key}`,
    `/${key}?x=1`,
    `${SIMPLE}?api_key=${encoded}`,
    `/fuel-api/api/${encoded}`,
    `${SIMPLE}?api_key=${key.toLowerCase()}`,
  ];
  for (const target of targets) await (await fetch(`${ready.public}${target}`)).arrayBuffer();
  for (const header of ['x-api-key', 'authorization', 'x-forwarded-for', 'cookie', 'referer', 'user-agent'])
    await (await fetch(`${ready.public}${SIMPLE}`, { headers: { [header]: key } })).arrayBuffer();
  // A request the balancer refuses as malformed, with the key in its request line.
  await new Promise<void>((resolve) => {
    const s = connect(new URL(ready.public).port as unknown as number, '127.0.0.1', () =>
      s.end(`GET ${SIMPLE}?api_key=${key} HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n`),
    );
    s.on('data', () => undefined);
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });
  // A request line that overflows the gateway's head limit, with the key in it.
  await (await fetch(`${ready.public}${SIMPLE}?api_key=${key}&pad=${'x'.repeat(9000)}`)).arrayBuffer();
  // HAProxy writes its line when a request ends: a marker sent last, once logged, means every
  // line before it is written. Its lines carry no target, so the marker is the one DELETE.
  await (await fetch(`${ready.public}/healthz`, { method: 'DELETE' })).arrayBuffer();
  await until(
    'the marker in the balancer log',
    () => / DELETE\s*$/m.test(readFileSync(ready.lb.logs[0] as string, 'utf8')),
    5000,
  );

  const files = [...ready.lb.logs, ...ready.gateways.flatMap((g) => g.logs)];
  let lines = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    lines += text.split('\n').length;
    // Every run of escapes decoded as UTF-8 bytes (invalid ones become U+FFFD): this never
    // throws, so no line escapes the check, as it could when one bad escape failed the whole file.
    const decoded = text.replace(/(?:%[0-9a-f]{2})+/gi, (run) =>
      Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'),
    );
    for (const form of [body, body.toLowerCase(), encodeURIComponent(key)]) {
      t.notOk(text.includes(form), `${file}: no ${form === body ? 'key' : 'form of the key'}`);
      t.notOk(decoded.toLowerCase().includes(form.toLowerCase()), `${file}: none once percent-decoded`);
    }
  }
  t.ok(lines > targets.length, `the logs were written (${lines} lines in ${files.length} files)`);
  t.ok(readFileSync(ready.lb.logs[0] as string, 'utf8').includes(' GET'), "the balancer's log has request lines");
});

t.test("one request id joins the balancer's log line and the gateway's access line", async (t) => {
  // A client's own id is dropped at the balancer: the gateways get (and answer with) HAProxy's.
  const r = await fetch(`${ready.public}/healthz`, { headers: { 'x-request-id': 'client-chosen' } });
  await r.arrayBuffer();
  const id = r.headers.get('x-request-id') ?? '';
  t.match(id, /^[0-9A-F]+:[0-9A-F]+_[0-9A-F]+:[0-9A-F]+_[0-9A-F]+_[0-9A-F]+:[0-9A-F]+$/, `HAProxy's id (${id})`);
  await until('the balancer line', () => readFileSync(ready.lb.logs[0] as string, 'utf8').includes(` ${id} GET`), 5000);
  const accessLine = (): string | undefined =>
    ready.gateways
      .flatMap((g) => g.logs.flatMap((f) => readFileSync(f, 'utf8').split('\n')))
      .find((l) => l.includes('"msg":"request"') && l.includes(`"req_id":"${id}"`));
  await until('the gateway access line', () => accessLine() !== undefined, 5000);
  t.match(JSON.parse(accessLine() as string), { url: '/healthz', status: 200, req_id: id });
  const lb = readFileSync(ready.lb.logs[0] as string, 'utf8')
    .split('\n')
    .find((l) => l.includes(id)) as string;
  t.match(lb, / 200 /, 'the balancer line has the same answer');
});
