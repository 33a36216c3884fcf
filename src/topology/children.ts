import { basename, join } from 'node:path';
import { PROJECT_ROOT } from '../config/load.js';
import type { OwnChild } from './state-dir.js';

/** How the runner starts each gateway: `node … dist/main.js serve`. */
export const GATEWAY_ARGS = ['--no-memory-reducer', join(PROJECT_ROOT, 'dist/main.js'), 'serve'];

/**
 * The command lines of the children a runner on `stateDir` starts: what a pid named in its claim
 * must be to be stopped. The claim is only a file; the process itself must show it is ours.
 */
export const ownChild =
  (stateDir: string): OwnChild =>
  (name, [cmd = '', ...args]) => {
    // Redis rewrites its title to "redis-server 127.0.0.1:PORT".
    if (name === 'redis') return basename(cmd.split(' ')[0] ?? '') === 'redis-server';
    if (name === 'balancer') return basename(cmd) === 'haproxy' && args.includes(join(stateDir, 'haproxy.cfg'));
    return /^gateway-\d+$/.test(name) && cmd === process.execPath && args.join('\0') === GATEWAY_ARGS.join('\0');
  };
