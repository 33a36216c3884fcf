import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { type GithubSigner, githubSigner, match, postReport, SECRET_SCANNING } from '../helpers/secret-scanning.js';
import { scaled } from '../helpers/wait.js';

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, object> }> }>>;
}

t.test('every status the leak-report operation declares is provoked, and every answer is declared', async (t) => {
  const github = githubSigner();
  const leakReports = { secret_scanning: { public_keys: [github.publicKey] }, demo_accounts: false };
  const redis = await startRedis(t);
  const redisStore = {
    // Short, so the 503 comes quickly once Redis is stopped; scaled, so a busy machine still connects.
    store: {
      type: 'redis',
      redis: { url: redis.url, command_timeout_ms: scaled(300), connect_timeout_ms: scaled(300) },
    },
  };
  const gw = await startGateway(
    t,
    { ...leakReports, limits: { invalid_key_throttle: { max_attempts: 2 } } },
    {
      clock: new ManualClock(NOW),
    },
  );
  const down = await startGateway(t, { ...leakReports, ...redisStore }, { clock: new ManualClock(NOW) });
  const doc = (await (await gw.get('/fuel-api/openapi.json')).json()) as Doc;
  const op = doc.paths[SECRET_SCANNING]?.['post'];
  t.ok(op, 'the POST operation is described');
  t.same(Object.keys(doc.paths[SECRET_SCANNING] ?? {}), ['post'], 'POST only');
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema(doc as object, 'openapi');
  const reached = new Set<string>();
  const check = async (at: TestGateway, body: string, headers: Record<string, string>): Promise<number> => {
    const r = await postReport(at, body, headers);
    const status = String(r.status);
    reached.add(status);
    t.ok(op?.responses[status], `${status} is declared`);
    const pointer = `openapi#/paths/${SECRET_SCANNING.replace(/\//g, '~1')}/post/responses/${status}/content/application~1json/schema`;
    const validate = ajv.getSchema(pointer);
    t.ok(validate?.(r.json), `${status} matches its schema`, { errors: validate?.errors });
    return r.status;
  };
  const signed = (s: GithubSigner, body: string) => s.headers(body);
  // Of our shape (checksum and all) but no account's: looked up, so the store is asked.
  const wellFormed = generateKey();
  const one = JSON.stringify([match(wellFormed)]);
  t.equal(await check(gw, one, signed(github, one)), 200);
  t.equal(await check(gw, '[]', signed(github, '[]')), 400);
  const many = JSON.stringify(Array.from({ length: 1001 }, () => match('x')));
  t.equal(await check(gw, many, signed(github, many)), 400);
  const huge = JSON.stringify([match('x'.repeat(1024 * 1024))]);
  t.equal(await check(gw, huge, signed(github, huge)), 413);
  t.equal(await check(gw, one, signed(githubSigner(github.publicKey.key_identifier), one)), 401);
  t.equal(await check(gw, one, { 'Content-Type': 'application/json' }), 401);
  t.equal(await check(gw, one, signed(github, one)), 429, 'the address is blocked after two forgeries');
  await redis.stop();
  t.equal(await check(down, one, signed(github, one)), 503, 'the store unreachable');
  const declared = Object.keys(op?.responses ?? {}).filter((s) => s !== 'default');
  t.same([...reached].sort(), declared.sort(), 'provoked exactly what is declared');
});
