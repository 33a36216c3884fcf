import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { canonicalIp, clientAddress, TrustedProxies } from '../../src/http/client.js';
import { redactUrl } from '../../src/http/request.js';

const req = (remoteAddress: string, forwarded?: string) =>
  ({
    socket: { remoteAddress },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  }) as unknown as IncomingMessage;

t.test('the throttle counts the socket address unless it is a trusted proxy', async (t) => {
  const none = new TrustedProxies([]);
  const lb = new TrustedProxies(['10.0.0.2', '10.0.0.3']);
  t.equal(
    clientAddress(req('203.0.113.9', '198.51.100.1'), none),
    '203.0.113.9',
    'untrusted: X-Forwarded-For is ignored',
  );
  t.equal(clientAddress(req('::ffff:203.0.113.9'), none), '203.0.113.9', 'IPv4-mapped addresses are IPv4');
  t.equal(clientAddress(req('10.0.0.2', '198.51.100.1'), lb), '198.51.100.1');
  t.equal(
    clientAddress(req('10.0.0.2', 'spoofed, 198.51.100.1, 10.0.0.3'), lb),
    '198.51.100.1',
    'right-most hop that is not a proxy',
  );
  t.equal(
    clientAddress(req('10.0.0.2', '1.1.1.1, 198.51.100.1'), lb),
    '198.51.100.1',
    'what the client claimed to the left is ignored',
  );
  t.equal(clientAddress(req('10.0.0.2', 'garbage'), lb), '10.0.0.2', 'an unparseable hop leaves the proxy address');
  t.equal(clientAddress(req('10.0.0.2'), lb), '10.0.0.2');
});

t.test('forwarded hops are read however the proxy spells them', async (t) => {
  const lb = new TrustedProxies(['2001:DB8::A', '10.0.0.2']);
  t.equal(clientAddress(req('10.0.0.2', '198.51.100.1:5123'), lb), '198.51.100.1', 'IPv4 with a port');
  t.equal(clientAddress(req('10.0.0.2', '[2001:db8:9::9]:443'), lb), '2001:db8:9:0::/64', 'bracketed IPv6 with a port');
  t.equal(
    clientAddress(req('2001:db8::a', '198.51.100.2'), lb),
    '198.51.100.2',
    'a trusted proxy written in another case and form',
  );
  t.equal(clientAddress(req('::FFFF:198.51.100.3'), new TrustedProxies([])), '198.51.100.3');
  t.equal(clientAddress(req('::ffff:c633:6404'), new TrustedProxies([])), '198.51.100.4', 'IPv4-mapped in hex');
  t.equal(canonicalIp('not-an-ip'), null);
  t.equal(canonicalIp(' 203.0.113.5 '), '203.0.113.5');
});

t.test("trusted proxies may be CIDR ranges, as a compose network's addresses are not fixed", async (t) => {
  const nets = new TrustedProxies(['172.16.0.0/12', 'fd00::/8', '10.1.2.3']);
  t.equal(clientAddress(req('172.18.0.5', '198.51.100.7'), nets), '198.51.100.7', 'an address inside the range');
  t.equal(
    clientAddress(req('::ffff:172.31.255.254', '198.51.100.7'), nets),
    '198.51.100.7',
    'IPv4-mapped inside the range',
  );
  t.equal(clientAddress(req('fd12::9', '198.51.100.8'), nets), '198.51.100.8', 'an IPv6 range');
  t.equal(clientAddress(req('172.32.0.1', '198.51.100.7'), nets), '172.32.0.1', 'just outside the range: not trusted');
  t.equal(clientAddress(req('10.1.2.3', '198.51.100.9'), nets), '198.51.100.9', 'a single address still works');
  t.equal(
    clientAddress(req('172.18.0.5', '198.51.100.7, 172.20.0.9'), nets),
    '198.51.100.7',
    'hops inside the range are skipped',
  );
});

t.test('IPv6 clients are grouped by /64', async (t) => {
  const none = new TrustedProxies([]);
  t.equal(clientAddress(req('2001:db8:1:2:aaaa::1'), none), '2001:db8:1:2::/64');
  t.equal(clientAddress(req('2001:0db8:0001:0002:ffff:1:2:3'), none), '2001:db8:1:2::/64');
  t.equal(clientAddress(req('2001:db8::1'), none), '2001:db8:0:0::/64');
  t.equal(clientAddress(req('::1'), none), '0:0:0:0::/64');
  t.equal(clientAddress(req('fe80::1%eth0'), none), 'fe80:0:0:0::/64');
});

t.test('logged URLs never carry a key, however the parameter name is encoded', async (t) => {
  t.equal(redactUrl('/p?api_key=SECRET&x=1'), '/p?api_key=[REDACTED]&x=1');
  t.equal(redactUrl('/p?x=1&api%5Fkey=SECRET'), '/p?x=1&api%5Fkey=[REDACTED]');
  t.equal(redactUrl('/p?API_KEY=SECRET'), '/p?API_KEY=[REDACTED]');
  t.equal(redactUrl('/p?%E0%A4%A=SECRET'), '/p?%E0%A4%A=[REDACTED]', 'an undecodable name is redacted to be safe');
  t.equal(redactUrl('/p?month=1&year=2026'), '/p?month=1&year=2026');
  t.equal(redactUrl('/p'), '/p');
  t.equal(redactUrl('/p??api_key=SECRET'), '/p??api_key=[REDACTED]', 'a doubled ? (which URLSearchParams forgives)');
  t.equal(redactUrl('/p?&=x&api_key'), '/p?&=x&api_key=[REDACTED]');
});
