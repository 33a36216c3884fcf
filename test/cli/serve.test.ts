import t from 'tap';
import { serve } from '../helpers/cli.js';

t.test('first run prints a curl line that answers with the simple envelope and real prices', async (t) => {
  const gw = serve(t);
  const [, url] = await gw.waitFor(/curl '(http:\/\/[^']+)'/);
  const r = await fetch(url as string);
  t.equal(r.status, 200);
  const body = (await r.json()) as {
    success: boolean;
    effective_date: string;
    fuel_prices: { inland: { petrol_95: string } };
    usage: { plan_type: string; requests_used: number };
  };
  t.equal(body.success, true);
  t.match(body.effective_date, /^\d{4}-\d{2}-\d{2}$/);
  t.match(body.fuel_prices.inland.petrol_95, /^\d+\.\d{2}$/);
  t.equal(body.usage.plan_type, 'developer');
  t.equal(body.usage.requests_used, 1);
  t.equal(await gw.stop('SIGTERM'), 0, 'SIGTERM drains and exits cleanly');
  const key = new URL(url as string).searchParams.get('api_key') as string;
  const logLines = gw
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  t.ok(logLines.length > 0, 'logs are JSON lines');
  t.notOk(
    logLines.some((l) => l.includes(key)),
    'the key is in no log line',
  );
});

t.test('a bad config stops the start with the problem named', async (t) => {
  const gw = serve(t, [], { PORT: '99999' });
  t.equal(await new Promise((r) => gw.child.on('exit', r)), 1);
  t.match(gw.output(), /environment PORT: listen\.public\.port: /);
});
