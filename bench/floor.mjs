// A second reference: the least any metering server does per request, on node:http. It finds the
// key among the bench's accounts (one Map), counts, splices the two changing usage numbers into
// the gateway's captured answer and fills in Content-Length and X-RateLimit-Remaining. What the
// gateway spends beyond this is its own structure: routing, checks, metrics, the store interface.
// Usage: node bench/floor.mjs ANSWER.json PORT KEYS_FILE PATH_PREFIX
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, port, keysFile, prefix] = process.argv.slice(2);
const { status, headers, body } = JSON.parse(readFileSync(file, 'utf8'));
const list = headers.flat();
/** Where the value of a header is in the list; a captured answer without it is not a counted 200. */
function valueAt(name) {
  const at = list.findIndex((h, i) => i % 2 === 0 && String(h).toLowerCase() === name);
  if (at === -1) throw new Error(`floor: the captured answer has no ${name} header`);
  return at + 1;
}
const lengthAt = valueAt('content-length');
const remainingAt = valueAt('x-ratelimit-remaining');
const limit = Number(list[valueAt('x-ratelimit-limit')]);

/** The captured body split around the values of `requests_used` and `requests_remaining`. */
function around(text, key) {
  const at = text.indexOf(`"${key}":`);
  if (at === -1) throw new Error(`floor: the captured answer has no ${key}`);
  const start = at + key.length + 3;
  return [text.slice(0, start), text.slice(text.indexOf(',', start))];
}
const [head, afterUsed] = around(body, 'requests_used');
const [mid, tail] = around(afterUsed, 'requests_remaining');
const counts = new Map();
for (const key of readFileSync(keysFile, 'utf8').split('\n')) if (key) counts.set(key, { used: 0 });

createServer((req, res) => {
  const url = req.url ?? '';
  const account = url.startsWith(prefix) ? counts.get(url.slice(prefix.length)) : undefined;
  if (account === undefined) {
    res.writeHead(401, { 'Content-Length': 0 });
    return res.end();
  }
  const used = ++account.used;
  const text = head + used + mid + (limit - used) + tail;
  list[lengthAt] = Buffer.byteLength(text);
  list[remainingAt] = limit - used;
  res.writeHead(status, list);
  res.end(text);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => process.exit(0));
