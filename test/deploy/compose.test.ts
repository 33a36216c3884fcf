import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { TrustedProxies } from '../../src/http/client.js';
import { ROOT } from '../helpers/cli.js';

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
}

async function tool(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(name, args, { cwd: ROOT, env: { ...process.env, ...env } });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error(
        `${name} is not installed (apt-get install ${name === 'nginx' ? 'nginx-light' : name}); .ci/run installs it`,
      );
    throw err;
  }
}

t.test(
  'docker-compose: one public endpoint (nginx) in front of scalable gateway replicas and a persistent Redis',
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
    t.match(lb.ports, [{ published: 8080, target: 8080 }]);
    t.match(lb.image, /^nginx:/);
    t.ok(
      lb.volumes?.some((v) => v.endsWith('deploy/nginx.conf:/etc/nginx/nginx.conf:ro')),
      'nginx runs the tested config',
    );

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

t.test('the nginx configuration passes nginx -t and forwards the client address', async (t) => {
  const prefix = mkdtempSync(join(tmpdir(), 'fpg-nginx-'));
  const { stderr } = await tool('nginx', ['-t', '-p', prefix, '-c', join(ROOT, 'deploy/nginx.conf'), '-e', 'stderr']);
  t.match(stderr, /test is successful/);
  const conf = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8');
  t.match(conf, /proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
  t.match(conf, /resolver 127\.0\.0\.11 valid=\d+s/, 'new replicas are found by re-resolving the service name');
});

t.test("the gateways' config trusts the compose network's X-Forwarded-For and is valid", async (t) => {
  const config = loadConfig({
    file: join(ROOT, 'deploy/gateway.yaml'),
    env: { ADMIN_TOKEN: 'x', REDIS_URL: 'redis://redis:6379' },
  });
  const trusted = new TrustedProxies(config.server.trusted_proxies);
  t.ok(trusted.has('172.18.0.4'), 'a typical compose network address');
  t.ok(trusted.has('10.0.3.7'));
  t.notOk(trusted.has('203.0.113.9'), 'a public address is not trusted');
  t.equal(config.listen.admin.host, '0.0.0.0');
});

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
    // As `npm start` runs it: without V8's memory reducer (README, "Performance").
    t.match(dockerfile, /^CMD \["node", "--no-memory-reducer", "dist\/main\.js", "serve"\]$/m);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    t.equal(pkg.scripts.start, 'node --no-memory-reducer dist/main.js serve');
  },
);
