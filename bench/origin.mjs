// The origin of the pass-through variant: a node:http fuel-price service answering its current
// prices (for the gateway's poller) and, on any other path, a history document of the shipped
// sets with `Cache-Control: max-age=3600`, built once. Usage: node bench/origin.mjs PORT
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port] = process.argv.slice(2);
const sets = JSON.parse(readFileSync('data/prices/sa-fuel-prices-2023-2026.json', 'utf8'));
const region = (r) => ({ zone: null, price_basis: 'official_regional_reference', ...r });
const last = sets[sets.length - 1];
const json = (doc) => {
  const body = JSON.stringify(doc);
  return [
    ['Content-Type', 'application/json'],
    ['Content-Length', String(Buffer.byteLength(body))],
    ['Cache-Control', 'max-age=3600'],
    body,
  ];
};
const current = json({
  success: true,
  source: 'Bench origin',
  effective_date: last.effective_date,
  updated_at: `${last.effective_date} 00:01:00`,
  data: { coastal: region(last.coastal), inland: region(last.inland) },
});
// A year of history, about the size of a historical.php answer.
const history = json({
  success: true,
  data: sets.slice(-12).map((s) => ({ effective_date: s.effective_date, coastal: s.coastal, inland: s.inland })),
  usage: null,
});

createServer((req, res) => {
  const [a, b, c, body] = req.url.startsWith('/fuel-api/api/current.php') ? current : history;
  res.writeHead(200, [...a, ...b, ...c]);
  res.end(body);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => process.exit(0));
