import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { configSchema } from './config-schema.js';
import { maskTree } from './mask.js';

/** One configuration key as the reference lists it. */
export interface ConfigKey {
  path: string;
  type: string;
  default: string;
  meaning: string;
}

type Node = z.core.$ZodType;

const MESSAGE_MEANING = 'Message of this error kind, served as {"success":false,"message":…}';

const defOf = (node: Node): z.core.$ZodTypeDef & Record<string, unknown> =>
  node._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
const described = (node: Node): string | undefined => (node as unknown as { description?: string }).description;

/** The schema's keys, depth first in declaration order, each with its type and `.describe()` text. */
function walk(node: Node, path: string[], meaning: string | undefined, out: Array<Omit<ConfigKey, 'default'>>): void {
  const def = defOf(node);
  const here = described(node) ?? meaning;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return walk(def['innerType'] as Node, path, here, out);
    case 'pipe':
      return walk(def['in'] as Node, path, here, out);
    case 'object':
      for (const [key, child] of Object.entries(def['shape'] as Record<string, Node>))
        walk(child, [...path, key], undefined, out);
      return;
    case 'record':
      return walk(def['valueType'] as Node, [...path, '<name>'], here, out);
  }
  const meaningOf = here ?? (path[0] === 'messages' ? MESSAGE_MEANING : '');
  out.push({ path: path.join('.'), type: typeName(node), meaning: meaningOf });
}

function typeName(node: Node): string {
  const def = defOf(node);
  switch (def.type) {
    case 'enum':
      return Object.values(def['entries'] as Record<string, string>).join(' \\| ');
    case 'literal':
      return (def['values'] as unknown[]).map((v) => JSON.stringify(v)).join(' \\| ');
    case 'union':
      return (def['options'] as Node[]).map(typeName).join(' \\| ');
    case 'array':
      return `list of ${typeName(def['element'] as Node)}`;
    case 'optional':
    case 'nullable':
    case 'default':
      return typeName(def['innerType'] as Node);
    case 'object':
      return 'mapping';
    default:
      return def.type;
  }
}

/** The value a path has in the defaults file; `<name>` stands for each key of a mapping. */
function defaultOf(defaults: unknown, path: string[]): string {
  const [head, ...rest] = path;
  if (head === undefined) return defaults === undefined ? '' : `\`${JSON.stringify(defaults)}\``;
  if (typeof defaults !== 'object' || defaults === null) return '';
  const tree = defaults as Record<string, unknown>;
  if (head !== '<name>') return defaultOf(tree[head], rest);
  return Object.entries(tree)
    .map(([name, value]) => [name, defaultOf(value, rest)])
    .filter(([, d]) => d !== '')
    .map(([name, d]) => `${name}: ${d}`)
    .join(', ');
}

export function configKeys(defaultsYaml: string): ConfigKey[] {
  const keys: Array<Omit<ConfigKey, 'default'>> = [];
  walk(configSchema, [], undefined, keys);
  // A defaults file edited to hold a credential must not publish it in the reference.
  const defaults: unknown = maskTree(parseYaml(defaultsYaml));
  return keys.map((k) => ({ ...k, default: defaultOf(defaults, k.path.split('.')) }));
}

/** docs/configuration.md: every key of the schema, its default (config/default.yaml) and meaning. */
export function configReference(defaultsYaml: string): string {
  const rows = configKeys(defaultsYaml).map(
    (k) => `| \`${k.path}\` | ${k.type} | ${k.default || '—'} | ${k.meaning} |`,
  );
  return [
    '# Configuration reference',
    '',
    'Generated from the configuration schema (`src/config/config-schema.ts`) and its defaults',
    '(`config/default.yaml`) by `fuel-gateway config reference`; a test fails when a key is',
    'undocumented or this file is out of date. Layer your own file with `--config FILE` (or',
    '`FUEL_GATEWAY_CONFIG`); the environment (`PORT`, `HOST`, `ADMIN_PORT`, `ADMIN_HOST`,',
    '`ADMIN_TOKEN`, `REDIS_URL`, `LOG_LEVEL`, `UPSTREAM_URL`, `UPSTREAM_API_KEY`, `TRUSTED_PROXIES`: comma-separated) wins over files.',
    '',
    '| key | type | default | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
