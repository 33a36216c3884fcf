import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { serve } from '../helpers/cli.js';

const run = promisify(execFile);

/** The public listener's address as the ready line logs it. */
async function publicAddress(gw: ReturnType<typeof serve>): Promise<{ address: string; port: number }> {
  const [line] = await gw.waitFor(/^\{.*"msg":"public listener ready".*$/m);
  return (JSON.parse(line) as { address: { address: string; port: number } }).address;
}

const status = (url: string): Promise<number | string> =>
  fetch(url).then(
    async (r) => {
      await r.arrayBuffer();
      return r.status;
    },
    (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
  );

t.test('with HOST unset the public listener answers on IPv6 and IPv4, and the printed line works', async (t) => {
  const gw = serve(t, [], { HOST: '' });
  const { address, port } = await publicAddress(gw);
  t.equal(address, '::', 'bound to every interface, both families');
  t.equal(await status(`http://[::1]:${port}/healthz`), 200, '[::1] answers');
  t.equal(await status(`http://127.0.0.1:${port}/healthz`), 200, '127.0.0.1 answers');
  const [, line = ''] = await gw.waitFor(/^ {2}(curl '[^'\n]*')$/m);
  t.match(line, `http://localhost:${port}/`, 'the printed line names localhost');
  const { stdout } = await run('sh', ['-c', `${line.trim()} -s -o /dev/null -w '%{http_code}'`]);
  t.equal(stdout, '200', 'and answers 200');
  t.equal(await gw.stop(), 0);
});

t.test('HOST=127.0.0.1 binds IPv4 loopback alone, as asked', async (t) => {
  const gw = serve(t, [], { HOST: '127.0.0.1' });
  const { address, port } = await publicAddress(gw);
  t.equal(address, '127.0.0.1');
  t.equal(await status(`http://[::1]:${port}/healthz`), 'ECONNREFUSED');
  t.equal(await status(`http://127.0.0.1:${port}/healthz`), 200);
  // Started in full (its signal handlers are set once it has printed the line) before it is stopped.
  await gw.waitFor(/^ {2}curl /m);
  t.equal(await gw.stop(), 0);
});
