import pino from 'pino';
import t from 'tap';
import { OutageLog } from '../../src/log/outage.js';
import { waitFor } from '../helpers/wait.js';

interface Line {
  msg: string;
  outage_ms?: number;
  refused?: number;
  err?: string;
}

const LINES = { began: 'began', goesOn: 'goes on', ended: 'ended' };

/** An outage log on a real logger, its lines kept; `at` is its clock. */
function rig(settleMs: number): { outage: OutageLog<'refused'>; lines: Line[]; at: { ms: number } } {
  const lines: Line[] = [];
  const at = { ms: 1_000 };
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as Line) });
  return { outage: new OutageLog(log, ['refused'], LINES, () => at.ms, settleMs), lines, at };
}

t.test(
  'a call that fails just after the store came back belongs to the same outage: one began, one ended',
  async (t) => {
    const { outage, lines, at } = rig(100);
    t.teardown(() => outage.close());
    outage.failed('down', 'refused');
    outage.failed('down', 'refused');
    at.ms = 3_000;
    outage.ended();
    t.same(
      lines.map((l) => l.msg),
      ['began'],
      'no end line at the first success: calls under way may still fail',
    );
    // A request that was in flight when the store came back.
    at.ms = 3_050;
    outage.failed('timed out', 'refused');
    at.ms = 3_100;
    outage.ended();
    await waitFor('the end line', () => lines.some((l) => l.msg === 'ended'));
    t.same(
      lines.map((l) => l.msg),
      ['began', 'ended'],
      'the late failure neither ends the outage nor begins another',
    );
    t.match(
      lines[1],
      { refused: 3, outage_ms: 2_100 },
      'the end line counts all three 503s, up to the success that ended it',
    );
  },
);

t.test(
  'without a settling time (a sequential loop: the webhook worker), the end line comes at the first success',
  (t) => {
    const { outage, lines } = rig(0);
    outage.failed('down', 'refused');
    outage.ended();
    t.same(
      lines.map((l) => l.msg),
      ['began', 'ended'],
    );
    outage.ended();
    t.equal(lines.length, 2, 'a success outside an outage logs nothing');
    t.end();
  },
);

t.test('a stop logs what the outage cost since its last line, so that no 503 goes unlogged', (t) => {
  const during = rig(60_000);
  during.outage.failed('down', 'refused');
  during.outage.failed('down', 'refused');
  during.outage.close();
  t.match(
    during.lines.map((l) => [l.msg, l.refused]),
    [['began'], ['goes on', 2]],
    'stopped during the outage: a last summary',
  );
  const ending = rig(60_000);
  ending.outage.failed('down', 'refused');
  ending.outage.ended();
  ending.outage.close();
  t.match(
    ending.lines.map((l) => [l.msg, l.refused]),
    [['began'], ['ended', 1]],
    'stopped while the end settles: the end line at once',
  );
  const quiet = rig(60_000);
  quiet.outage.close();
  t.equal(quiet.lines.length, 0, 'no outage, nothing to log');
  t.end();
});
