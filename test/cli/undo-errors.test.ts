import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('fpg-cli-undo-');
const write = (name: string, data: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(data));
  return p;
};

t.test('CLI mistakes in listing, deleting and cancelling: stderr names the field, exit 1', async (t) => {
  const redis = await startRedis(t);
  const config = write('redis-undo-errors.yaml', {
    store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } },
  });
  const cases: Array<[string[], RegExp]> = [
    [['prices', 'cancel', '2026-13-45'], /BAD_REQUEST: date: expected a real calendar date/],
    [['prices', 'cancel', 'tomorrow'], /BAD_REQUEST: date: expected a date YYYY-MM-DD/],
    [['prices', 'cancel'], /missing effective date/],
    [['prices', 'cancel', '2031-01-01'], /NOT_FOUND: no price set for 2031-01-01/],
    [['accounts', 'delete'], /missing account id/],
    [['accounts', 'delete', 'acct_missing'], /NOT_FOUND: no account with id acct_missing/],
    [['accounts', 'list', '--limit', '0'], /BAD_REQUEST: limit: expected a whole number from 1 to 500/],
    [['accounts', 'list', '--status', 'asleep'], /BAD_REQUEST: status: /],
    [['accounts', 'list', '--cursor', 'forged!'], /BAD_REQUEST: cursor: not a cursor this API gave/],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli([...args, '--config', config])));
  results.forEach((r, i) => {
    const [args, re] = cases[i] as [string[], RegExp];
    t.equal(r.code, 1, args.join(' '));
    t.match(r.stderr, re, args.join(' '));
    t.notMatch(r.stderr, /"audit"/, 'a refused change writes no audit line');
    t.equal(r.stdout, '');
  });
  // An option no command takes is refused before the store is read: exit 2 (strict-args.test.ts walks every command).
  const colour = await runCli(['accounts', 'list', '--colour', 'red', '--config', config]);
  t.equal(colour.code, 2, 'accounts list --colour red');
  t.match(colour.stderr, /accounts list: unknown option --colour/);
  t.equal(colour.stdout, '');
});
