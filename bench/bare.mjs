// The reference: a bare node:http server writing the bytes the gateway answers with (status,
// headers in the same order, body), read from the JSON file named on the command line.
// Usage: node bench/bare.mjs ANSWER.json PORT
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, port] = process.argv.slice(2);
const { status, headers, body } = JSON.parse(readFileSync(file, 'utf8'));
const flat = headers.flat();

createServer((_req, res) => {
  res.writeHead(status, flat);
  res.end(body);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => process.exit(0));
