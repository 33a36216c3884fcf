/**
 * The operator commands, each declared once (command-table.ts says what an entry holds). The
 * admin router (admin-server.ts), the CLI parser (cli/args.ts), its dispatch (cli/operate.ts)
 * and `fuel-gateway --help` all read this table.
 */
import { ACCOUNT_COMMANDS } from './account-commands.js';
import type { AdminOperation, Method, OperatorCommand } from './command-table.js';
import { MEMBER_COMMANDS } from './member-commands.js';
import { SERVICE_COMMANDS } from './service-commands.js';

export const OPERATOR_COMMANDS: readonly OperatorCommand[] = [
  ...ACCOUNT_COMMANDS,
  ...MEMBER_COMMANDS,
  ...SERVICE_COMMANDS,
];

/** The commands' lines of `fuel-gateway --help`, in the table's order. */
export const OPERATOR_USAGE = OPERATOR_COMMANDS.flatMap((c) =>
  c.help === undefined ? [] : [`       fuel-gateway ${c.help}`],
).join('\n');

/** A compiled admin route: the operation, and the pattern of its path. */
export interface AdminRoute {
  operation: AdminOperation<unknown, unknown>;
  pattern: RegExp;
}

// `Allow` lists a path's methods in this order.
const METHOD_ORDER: readonly Method[] = ['POST', 'PUT', 'GET', 'PATCH', 'DELETE'];

/**
 * The path as a pattern: `:date` and `:email` are any one segment, another `:name` an id (`[\w-]+`). A
 * parameter never takes a word another route has in its place (`/admin/prices/history` is not a
 * date), so such a path with the wrong method is a 405, not a 400 about the parameter.
 */
function patternOf(path: string, paths: readonly string[]): RegExp {
  const segments = path.split('/');
  const source = segments.map((s, i) => {
    if (!s.startsWith(':')) return s;
    const words = paths
      .map((p) => p.split('/'))
      .filter((o) => o.length === segments.length && o.slice(0, i).join('/') === segments.slice(0, i).join('/'))
      .flatMap((o) => (o[i]?.startsWith(':') ? [] : [o[i] as string]));
    const not = words.map((w) => `(?!${w}(?:\\/|$))`).join('');
    return `${not}(${s === ':date' || s === ':email' ? '[^/]+' : '[\\w-]+'})`;
  });
  return new RegExp(`^${source.join('\\/')}$`);
}

/** Each operation of the table once, its methods on a path in `Allow` order. */
export function adminRoutes(): AdminRoute[] {
  const operations = [...new Set(OPERATOR_COMMANDS.map((c) => c.operation))].sort(
    (a, b) => METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method),
  );
  const paths = operations.map((o) => o.path);
  return operations.map((operation) => ({ operation, pattern: patternOf(operation.path, paths) }));
}
