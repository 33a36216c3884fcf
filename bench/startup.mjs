// node bench/startup.mjs [RUNS]: what the shipped price history adds to the start. Starts the
// gateway in this process (from dist/: npm run build first) with a fresh memory store, RUNS
// times (default 15) with the default price files and RUNS times with the 2023-2026 file alone,
// alternating, and prints the medians of the wall time and of this process's CPU time of
// startApp. CPU time is the steadier figure on a shared machine. Not part of npm test.
import { join } from 'node:path';
import pino from 'pino';
import { startApp } from '../dist/app.js';
import { loadConfig } from '../dist/config/load.js';
import { ROOT } from './lib.mjs';

const runs = Number(process.argv[2] ?? 15);
const base = {
  listen: { public: { host: '127.0.0.1', port: 0 }, admin: { host: '127.0.0.1', port: 0 } },
  prices: { watch_file: false },
  store: { memory: { file: '' } },
};
const configs = {
  shipped: loadConfig({ env: {}, overrides: base }),
  '2023-2026 only': loadConfig({
    env: {},
    overrides: { ...base, prices: { ...base.prices, file: join(ROOT, 'data/prices/sa-fuel-prices-2023-2026.json') } },
  }),
};
const log = pino({ level: 'silent' });
const results = Object.fromEntries(Object.keys(configs).map((k) => [k, { wall: [], cpu: [] }]));
for (let i = 0; i < runs; i++)
  for (const [name, config] of Object.entries(configs)) {
    const t = performance.now();
    const c = process.cpuUsage();
    const app = await startApp(config, { log });
    const d = process.cpuUsage(c);
    results[name].wall.push(performance.now() - t);
    results[name].cpu.push((d.user + d.system) / 1000);
    await app.close();
  }
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const [name, r] of Object.entries(results))
  console.log(
    `${name}: startApp median ${med(r.wall).toFixed(0)} ms wall, ${med(r.cpu).toFixed(0)} ms CPU (${runs} runs)`,
  );
