import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { GatewayError } from '../failures.js';
import { type Config, configSchema } from './config-schema.js';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DEFAULT_CONFIG_FILE = resolve(PROJECT_ROOT, 'config/default.yaml');

type Tree = Record<string, unknown>;
/** One source of settings, remembered so an error can name where a bad value came from. */
interface Layer {
  name: string;
  values: Tree;
}

const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of settings trees: mappings merge key by key, anything else is replaced. */
export function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isTree(b) && isTree(v) ? merge(b, v) : v;
  }
  return out;
}

function has(tree: Tree, path: PropertyKey[]): boolean {
  let node: unknown = tree;
  // Into lists too: a list is replaced whole by the layer that sets it, so its items are that layer's.
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !(String(key) in node)) return false;
    node = (node as Tree)[String(key)];
  }
  return true;
}

function readLayer(file: string, baseDir = dirname(file)): Layer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new GatewayError('CONFIG_INVALID', `${file}: cannot read: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text) ?? {};
  } catch (e) {
    throw new GatewayError('CONFIG_INVALID', `${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isTree(parsed)) throw new GatewayError('CONFIG_INVALID', `${file}: expected a mapping at the top level`);
  let values: Tree = parsed;
  // A relative file is relative to the config file that names it (the defaults: the project).
  const prices = values['prices'];
  const priceFile = isTree(prices) ? prices['file'] : undefined;
  if (typeof priceFile === 'string' || Array.isArray(priceFile)) {
    const absolute = (f: unknown): unknown => (typeof f === 'string' && !isAbsolute(f) ? resolve(baseDir, f) : f);
    values = merge(values, {
      prices: { file: Array.isArray(priceFile) ? priceFile.map(absolute) : absolute(priceFile) },
    });
  }
  const store = values['store'];
  const memory = isTree(store) ? store['memory'] : undefined;
  if (isTree(memory) && typeof memory['file'] === 'string' && memory['file'] !== '' && !isAbsolute(memory['file'])) {
    values = merge(values, { store: { memory: { file: resolve(baseDir, memory['file']) } } });
  }
  return { name: file, values };
}

const ENV_PATHS: Record<string, { path: string[]; number?: boolean; list?: boolean }> = {
  PORT: { path: ['listen', 'public', 'port'], number: true },
  HOST: { path: ['listen', 'public', 'host'] },
  ADMIN_PORT: { path: ['listen', 'admin', 'port'], number: true },
  ADMIN_HOST: { path: ['listen', 'admin', 'host'] },
  ADMIN_TOKEN: { path: ['listen', 'admin', 'token'] },
  REDIS_URL: { path: ['store', 'redis', 'url'] },
  LOG_LEVEL: { path: ['log', 'level'] },
  // The balancer's address: the one thing a deployment's shared gateway file cannot know.
  TRUSTED_PROXIES: { path: ['server', 'trusted_proxies'], list: true },
  UPSTREAM_URL: { path: ['upstream', 'url'] },
  UPSTREAM_API_KEY: { path: ['upstream', 'api_key'] },
  SMTP_URL: { path: ['portal', 'smtp', 'url'] },
};

function envLayers(env: NodeJS.ProcessEnv): Layer[] {
  const layers: Layer[] = [];
  for (const [name, { path, number, list }] of Object.entries(ENV_PATHS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value: unknown = list
      ? raw.split(/[\s,]+/).filter((s) => s !== '')
      : number && /^\d+$/.test(raw)
        ? Number(raw)
        : raw;
    const values = path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Tree;
    // Setting REDIS_URL is how ops select the shared store.
    layers.push({
      name: `environment ${name}`,
      values: name === 'REDIS_URL' ? merge(values, { store: { type: 'redis' } }) : values,
    });
  }
  return layers;
}

function describe(issue: z.core.$ZodIssue, layers: Layer[]): string {
  // An unknown key is reported at its parent: look for the layer that holds the key itself.
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
  const origin = [...layers].reverse().find((l) => has(l.values, path)) ?? layers[layers.length - 1];
  const where = origin?.name.startsWith('/') ? relativeName(origin.name) : origin?.name;
  return `${where}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`;
}

const relativeName = (file: string): string =>
  file.startsWith(`${process.cwd()}/`) ? file.slice(process.cwd().length + 1) : file;

export interface LoadOptions {
  /** An extra file layered over the defaults (--config). Falls back to FUEL_GATEWAY_CONFIG. */
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Settings layered last, for tests and embedding. */
  overrides?: Tree;
}

/** Reads, layers and validates the configuration. Throws CONFIG_INVALID with one line per problem. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const layers: Layer[] = [readLayer(DEFAULT_CONFIG_FILE, PROJECT_ROOT)];
  const extra = opts.file ?? env['FUEL_GATEWAY_CONFIG'];
  if (extra) layers.push(readLayer(resolve(extra)));
  layers.push(...envLayers(env));
  if (opts.overrides) layers.push({ name: 'overrides', values: opts.overrides });
  const merged = layers.reduce<Tree>((acc, l) => merge(acc, l.values), {});
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => describe(i, layers));
    throw new GatewayError('CONFIG_INVALID', `invalid configuration:\n${lines.join('\n')}`, lines);
  }
  return parsed.data;
}
