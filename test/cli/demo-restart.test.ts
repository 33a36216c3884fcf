import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { gatewayProcess } from '../helpers/cli.js';

const run = promisify(execFile);

interface Listed {
  accounts: Array<{ id: string; plan: string; label: string }>;
}

t.test(
  'every start on the same memory-store file prints a curl line that works, for the same demo account',
  async (t) => {
    const dir = t.testdir();
    const config = join(dir, 'gateway.yaml');
    writeFileSync(config, JSON.stringify({ store: { memory: { file: 'state.json' } }, log: { access: false } }));
    const seen: Array<{ developer: string; count: number; key: string }> = [];
    for (const start of [1, 2, 3]) {
      const gw = await gatewayProcess(t, config);
      const [, line = '', key = ''] = await gw.waitFor(/^ {2}(curl '[^'\n]*api_key=([^'\n]+)')$/m);
      // The line exactly as printed, as one would paste it into a shell.
      const { stdout } = await run('sh', ['-c', `${line.trim()} -s -o /dev/null -w '%{http_code}'`]);
      t.equal(stdout, '200', `start ${start}: the printed line answers 200 (${line.trim()})`);
      const list = (await (await fetch(`${gw.admin}/admin/accounts?limit=100`)).json()) as Listed;
      const developer = list.accounts.filter((a) => a.plan === 'developer');
      t.equal(developer.length, 1, `start ${start}: one developer demo account`);
      seen.push({ developer: developer[0]?.id ?? '', count: list.accounts.length, key });
      t.equal(await gw.stop(), 0);
    }
    t.same(new Set(seen.map((s) => s.developer)).size, 1, 'the same demo account each time');
    t.same(
      seen.map((s) => s.count),
      [4, 4, 4],
      'no more demo accounts than one per plan',
    );
    t.equal(new Set(seen.map((s) => s.key)).size, 3, 'a new key each start (the old one is stored hashed only)');
  },
);
