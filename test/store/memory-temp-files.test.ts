import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { gatewayProcess } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

t.test(
  'the memory store removes temp files a crashed run left, and writes its state 0600 through no planted file',
  async (t) => {
    const dir = t.testdir({
      'victim.txt': 'precious\n',
      state: { 'store.json.backup': 'kept', 'other.json.1.tmp': 'not ours' },
    });
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      JSON.stringify({ store: { memory: { file: 'state/store.json' } }, demo_accounts: false, log: { access: false } }),
    );
    const stateDir = join(dir, 'state');
    const file = join(stateDir, 'store.json');
    // A run that died mid-write (kill -9) leaves its temp file: key hashes, webhook secrets.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid as number;
    const stale = `${file}.${deadPid}.tmp`;
    writeFileSync(stale, '{"accounts":[{"key_hash":"…"}]}');
    chmodSync(stale, 0o644);

    const gw = await gatewayProcess(t, config);
    t.notOk(existsSync(stale), "a dead process's temp file is removed at start");
    t.same(
      readdirSync(stateDir)
        .filter((n) => n !== 'store.json')
        .sort(),
      ['other.json.1.tmp', 'store.json.backup'],
      'other files are left alone',
    );

    const pid = gw.child.pid as number;
    const create = async (): Promise<string> => {
      const r = await fetch(`${gw.admin}/admin/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'starter' }),
      });
      t.equal(r.status, 201);
      const id = ((await r.json()) as { account: { id: string } }).account.id;
      await waitFor(
        'the account in the file',
        () => existsSync(file) && readFileSync(file, 'utf8').includes(id),
        20_000,
      );
      return id;
    };

    // A file under the running gateway's temp name, readable by all: the state must not take its mode.
    const temp = `${file}.${pid}.tmp`;
    writeFileSync(temp, 'planted');
    chmodSync(temp, 0o644);
    await create();
    t.equal(statSync(file).mode & 0o777, 0o600, 'the state file is 0600');

    // A link under that name must not be written through, nor become the state file.
    symlinkSync(join(dir, 'victim.txt'), temp);
    await create();
    t.equal(readFileSync(join(dir, 'victim.txt'), 'utf8'), 'precious\n', 'the link target is untouched');
    t.ok(lstatSync(file).isFile(), 'the state file is a file');
    t.equal(statSync(file).mode & 0o777, 0o600);
    t.equal(await gw.stop(), 0);
  },
);
