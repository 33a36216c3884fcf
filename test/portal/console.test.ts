import t from 'tap';
import { serve } from '../helpers/cli.js';
import { follow } from '../helpers/portal.js';

t.test(
  'npm start without SMTP: the portal link beside the curl line, and a sign-in link printed on the console, never in a log line',
  async (t) => {
    const gw = serve(t);
    await gw.waitFor(/curl '(http:\/\/[^']+)'/);
    const [, portal] = await gw.waitFor(/Customer portal: (http:\/\/\S+\/portal\/) \(no SMTP server set/);
    const base = new URL(portal as string).origin;
    const asked = await fetch(`${base}/portal/api/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'newcomer@example.test' }),
    });
    t.equal(asked.status, 202);
    const [, link] = await gw.waitFor(/portal sign-in link for newcomer@example\.test: (\S+)/);
    t.match(link, new RegExp(`^${base}/portal/auth\\?token=fpg_link_`));
    const followed = await follow(link as string);
    t.equal(followed.status, 303, 'the printed link signs the newcomer up');
    const me = await fetch(`${base}/portal/api/me`, { headers: { cookie: followed.cookie as string } });
    t.equal(me.status, 200);
    const logLines = gw
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    t.ok(logLines.length > 0);
    t.notOk(
      logLines.some((l) => /fpg_(?:link|sess)_[A-Za-z0-9_-]{10}/.test(l)),
      'no token in any log line',
    );
  },
);
