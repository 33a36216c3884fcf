import { lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { dayOf } from '../../src/time/days.js';
import { runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';

t.test(
  'usage export --out refuses a symlink and writes nothing through it; a plain path is replaced whole',
  async (t) => {
    const redis = await startRedis(t);
    const dir = t.testdir({ 'victim.txt': 'precious\n', out: {} });
    const config = join(dir, 'redis.yaml');
    writeFileSync(config, JSON.stringify({ store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } } }));
    const today = dayOf(Date.now(), 'Africa/Johannesburg');
    const exportTo = (out: string) =>
      runCli(['usage', 'export', '--from', today, '--to', today, '--out', out, '--config', config]);
    const victim = join(dir, 'victim.txt');
    const outDir = join(dir, 'out');

    const link = join(outDir, 'usage.csv');
    symlinkSync(victim, link);
    const r = await exportTo(link);
    t.not(r.code, 0, 'refused');
    t.match(r.stderr, /usage\.csv is a symbolic link/);
    t.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the target is untouched');
    t.equal(readlinkSync(link), victim, 'the link is left as it was');

    const dangling = join(outDir, 'dangling.csv');
    symlinkSync(join(dir, 'created-through-link.csv'), dangling);
    const d = await exportTo(dangling);
    t.not(d.code, 0, 'a link to nothing is refused too');
    t.same(readdirSync(dir).sort(), ['out', 'redis.yaml', 'victim.txt'], 'nothing was created through it');

    const plain = join(outDir, 'plain.csv');
    writeFileSync(plain, 'old contents that are longer than the new export, to see no tail is left behind\n'.repeat(5));
    const p = await exportTo(plain);
    t.equal(p.code, 0, p.stderr);
    t.equal(readFileSync(plain, 'utf8'), 'account_id,label,plan,date,requests\r\n', 'replaced whole');
    t.ok(lstatSync(plain).isFile());
    t.same(readdirSync(outDir).sort(), ['dangling.csv', 'plain.csv', 'usage.csv'], 'no temporary file is left');
  },
);
