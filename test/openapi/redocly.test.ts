import { createConfig, lintFromString } from '@redocly/openapi-core';
import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { githubSigner } from '../helpers/secret-scanning.js';

const withLeakReports = { secret_scanning: { public_keys: [githubSigner('k').publicKey] } };
for (const settings of [{}, { page: { enabled: false } }, withLeakReports]) {
  t.test(
    `Redocly's recommended rules find no error in the served document ${Object.keys(settings).join(', ') || 'defaults'}`,
    async (t) => {
      const gw = await startGateway(t, settings, { clock: new ManualClock(NOW) });
      const source = await (await gw.get('/fuel-api/openapi.json')).text();
      const config = await createConfig({ extends: ['recommended'] });
      const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
      const show = (p: (typeof problems)[number]): string =>
        `${p.ruleId} ${p.message} at ${p.location.map((l) => l.pointer).join(' ')}`;
      const errors = problems.filter((p) => p.severity === 'error').map(show);
      t.same(errors, [], 'no error');
      t.comment(
        `warnings: ${
          problems
            .filter((p) => p.severity === 'warn')
            .map(show)
            .join('\n') || 'none'
        }`,
      );
    },
  );
}

t.test(
  'every operation has an operationId and tags, public ones say security: [], HEAD is described where served',
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    type Op = { operationId?: string; tags?: string[]; security?: unknown[] };
    const doc = (await (await gw.get('/fuel-api/openapi.json')).json()) as {
      info: { license?: { name: string }; contact?: object };
      paths: Record<string, Record<string, Op>>;
    };
    t.equal(doc.info.license?.name, 'MIT');
    t.ok(doc.info.contact);
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      t.same(Object.keys(item).sort(), ['get', 'head'], `${path}: GET and HEAD`);
      for (const [method, op] of Object.entries(item)) {
        t.type(op.operationId, 'string', `${method} ${path}`);
        t.ok(op.tags?.length, `${method} ${path} tags`);
        ids.add(op.operationId as string);
        const keyed = path.startsWith('/fuel-api/api/') || path.startsWith('/exapi/');
        if (keyed) t.ok(op.security?.length, `${method} ${path} needs a key`);
        else t.same(op.security, [], `${method} ${path} is public`);
        const answer = await gw.get(path, { method: method.toUpperCase() });
        t.not(answer.status, 405, `${method} ${path} is served`);
      }
    }
    t.equal(ids.size, Object.keys(doc.paths).length * 2, 'operationIds are unique');
  },
);
