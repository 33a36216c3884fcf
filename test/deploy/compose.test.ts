import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { TrustedProxies } from '../../src/http/client.js';
import { haproxyBinary } from '../../src/topology/haproxy.js';
import { ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// Its tests share nothing and spend most of their time waiting: they run 4 at a time.
t.jobs = 4;

const run = promisify(execFile);

interface Service {
  image?: string;
  build?: unknown;
  ports?: Array<{ published: number | string; target: number; host_ip?: string }>;
  container_name?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  stop_grace_period?: string;
  depends_on?: Record<string, unknown>;
  networks?: unknown;
}

async function tool(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    const bin = name === 'haproxy' ? haproxyBinary() : name;
    return await run(bin, args, { cwd: ROOT, env: { ...process.env, ...env } });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error(`${name} is not installed (apt-get install ${name}); .ci/run installs it`);
    throw err;
  }
}

t.test(
  'docker-compose: one public endpoint (HAProxy) in front of scalable gateway replicas and a persistent Redis',
  async (t) => {
    const { stdout } = await tool('docker-compose', ['-f', 'docker-compose.yml', 'config'], {
      ADMIN_TOKEN: 'test-token',
      PUBLIC_PORT: '',
    });
    const services = (parse(stdout) as { services: Record<string, Service> }).services;
    t.same(Object.keys(services).sort(), ['gateway', 'lb', 'redis']);
    const { gateway, lb, redis } = services as Record<'gateway' | 'lb' | 'redis', Service>;

    const published = Object.entries(services).filter(([, s]) => (s.ports ?? []).length > 0);
    t.same(
      published.map(([name]) => name),
      ['lb'],
      'only the balancer publishes a port',
    );
    t.match(lb.ports, [
      { published: 8080, target: 8080 },
      { published: 8443, target: 8443 },
    ]);
    t.match(lb.image, /^haproxy:3\./, 'an official HAProxy LTS image');
    t.ok(
      lb.volumes?.some((v) => v.endsWith('deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro')),
      'HAProxy runs the tested config',
    );
    t.same(lb.networks, { backend: { ipv4_address: '172.30.0.10' } }, 'the balancer has a fixed address');
    t.equal(gateway.environment?.TRUSTED_PROXIES, undefined, 'the gateways trust what deploy/gateway.yaml says');

    t.equal(gateway.container_name, undefined, 'no fixed name: `--scale gateway=N` works');
    t.equal(gateway.ports, undefined, 'no gateway port (public or admin) is published');
    t.equal(gateway.environment?.REDIS_URL, 'redis://redis:6379');
    t.equal(gateway.environment?.ADMIN_TOKEN, 'test-token');
    t.equal(gateway.environment?.FUEL_GATEWAY_CONFIG, '/app/deploy/gateway.yaml');
    t.ok(
      Number.parseInt(gateway.stop_grace_period ?? '0', 10) > 10,
      'the grace period outlasts request_timeout_ms (10 s)',
    );
    t.ok(gateway.depends_on && 'redis' in gateway.depends_on);

    t.same(redis.command?.slice(0, 3), ['redis-server', '--appendonly', 'yes'], 'Redis keeps an append-only file');
    t.ok(
      redis.volumes?.some((v) => v.endsWith(':/data:rw') || v.endsWith(':/data')),
      'on a volume',
    );
  },
);

t.test('docker-compose refuses to start without an admin token', async (t) => {
  await t.rejects(
    tool('docker-compose', ['-f', 'docker-compose.yml', 'config'], { ADMIN_TOKEN: '' }),
    /set ADMIN_TOKEN first/,
  );
});

t.test(
  'the balancer config passes haproxy -c, retries only connection failures, checks /readyz and logs no request target',
  async (t) => {
    const { stdout } = await tool('haproxy', ['-c', '-f', join(ROOT, 'deploy/haproxy.cfg')]);
    t.match(stdout, /Configuration file is valid/);
    const conf = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
    const lines = conf.split('\n').filter((l) => !l.trim().startsWith('#'));
    const has = (re: RegExp): boolean => lines.some((l) => re.test(l));
    t.ok(has(/^\s*retry-on conn-failure\s*$/), 'a request that reached a gateway is never sent again');
    t.ok(has(/^\s*http-check send meth GET uri \/readyz/) && has(/^\s*http-check expect status 200/));
    t.ok(has(/^\s*http-reuse safe/), 'connections to the gateways are reused');
    t.ok(has(/^\s*server-template gw \S+ gateway:8080 resolvers docker/), 'replicas found through Docker DNS');
    t.ok(has(/^\s*http-request del-header X-Forwarded-For/) && has(/^\s*option forwardfor/));
    const format = lines.find((l) => /^\s*log-format /.test(l)) ?? '';
    t.notMatch(format, /%r(?![a-z])|%H[UPQ]|capture|url|path|query/i, 'no request target in the log line');
  },
);

t.test('with a certificate mounted the balancer config also serves TLS, and without one it does not', async (t) => {
  const dir = tempDir('fpg-tls-');
  const pem = join(dir, 'gateway.pem');
  await tool('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
    ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
  ]);
  writeFileSync(pem, readFileSync(join(dir, 'cert.pem'), 'utf8') + readFileSync(join(dir, 'key.pem'), 'utf8'));
  const { stdout } = await tool('haproxy', ['-c', '-f', join(ROOT, 'deploy/haproxy.cfg')], { FPG_TLS_CERT: pem });
  t.match(stdout, /Configuration file is valid/);
  await t.rejects(
    tool('haproxy', ['-c', '-f', join(ROOT, 'deploy/haproxy.cfg')], { FPG_TLS_CERT: join(dir, 'missing.pem') }),
    /unable to stat SSL certificate/,
    'a named certificate that is missing stops the balancer instead of serving plain HTTP alone',
  );
});

t.test(
  "the gateways' config trusts the balancer's fixed address alone, and the environment can name another",
  async (t) => {
    const config = loadConfig({
      file: join(ROOT, 'deploy/gateway.yaml'),
      env: { ADMIN_TOKEN: 'Kq7_vX2mZ9pR4sT8wN1yB6cD3fG5hJ0L', REDIS_URL: 'redis://redis:6379' },
    });
    const trusted = new TrustedProxies(config.server.trusted_proxies);
    t.ok(trusted.has('172.30.0.10'), "the balancer's address on the compose network");
    for (const other of ['172.30.0.11', '172.30.0.130', '172.18.0.4', '10.0.3.7', '192.168.1.5', '203.0.113.9'])
      t.notOk(trusted.has(other), `${other} is not trusted`);
    t.equal(config.listen.admin.host, '0.0.0.0');
    const local = loadConfig({
      file: join(ROOT, 'deploy/gateway.yaml'),
      env: { TRUSTED_PROXIES: '127.0.0.1', ADMIN_TOKEN: 'Kq7_vX2mZ9pR4sT8wN1yB6cD3fG5hJ0L' },
    });
    t.same(local.server.trusted_proxies, ['127.0.0.1'], 'npm run topology trusts its local balancer instead');
  },
);

t.test(
  'server.trusted_proxies accepts addresses and CIDR ranges, and refuses anything else naming the field',
  async (t) => {
    const ok = loadConfig({
      env: {},
      overrides: { server: { trusted_proxies: ['10.0.0.1', '172.16.0.0/12', 'fd00::/8', '::1'] } },
    });
    t.equal(ok.server.trusted_proxies.length, 4);
    for (const bad of ['10.0.0.0/33', 'fd00::/129', 'proxy.local', '10.0.0.0/8/1', '10.0.0.0/']) {
      t.throws(
        () => loadConfig({ env: {}, overrides: { server: { trusted_proxies: [bad] } } }),
        /server\.trusted_proxies\.0: expected an IP address or a CIDR range/,
        bad,
      );
    }
  },
);

t.test(
  'the image: Node 22 LTS in every stage, production dependencies only, non-root, health check, the CLI on PATH',
  async (t) => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const stages = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    t.ok(stages.length >= 2, 'multi-stage');
    t.ok(
      stages.every((s) => s === 'node:22-slim'),
      `every stage on node:22-slim (${stages.join(', ')})`,
    );
    t.match(dockerfile, /npm ci --omit=dev/);
    t.match(dockerfile, /^USER node$/m);
    t.match(dockerfile, /^HEALTHCHECK .*\n.*\/healthz/m);
    t.match(dockerfile, /ln -s \/app\/dist\/main\.js \/usr\/local\/bin\/fuel-gateway/);
    // As `npm start` runs it: without V8's memory reducer (docs/performance.md, "Why `--no-memory-reducer`").
    t.match(dockerfile, /^CMD \["node", "--no-memory-reducer", "dist\/main\.js", "serve"\]$/m);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    t.equal(pkg.scripts.start, 'node --no-memory-reducer dist/main.js serve');
  },
);

t.test('the shipped gateway config never makes or prints a demo key, even on the memory store', async (t) => {
  // Without REDIS_URL (a mistake, or a single instance) the gateway falls back to the memory
  // store, whose demo accounts would print a working developer key at every start.
  const memory = loadConfig({
    file: join(ROOT, 'deploy/gateway.yaml'),
    env: { ADMIN_TOKEN: 'Kq7_vX2mZ9pR4sT8wN1yB6cD3fG5hJ0L' },
  });
  t.equal(memory.store.type, 'memory');
  t.equal(memory.demo_accounts, false, 'deploy/gateway.yaml sets demo_accounts: false');
  const docs = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
  t.match(docs, /demo_accounts: false/, 'docs/deployment.md tells single instances to set it');
});
