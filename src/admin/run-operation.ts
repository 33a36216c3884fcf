/** Where an operator command's input meets its entry's schemas, for the admin router and the CLI alike. */
import type { Config } from '../config/config-schema.js';
import type { AdminOperation, CommandInput, InputSchema, RawInput } from './command-table.js';
import { accountInput, parse } from './input.js';
import * as schemas from './input-schemas.js';
import type { Operations } from './operations.js';

/**
 * Runs a table entry's operation on its input, checked by the entry's schemas (command-table.ts):
 * the one place where both doors, the admin router and the CLI, validate an operation's body and
 * query. An operation reading no body is given `{}` (a rotation's default grace).
 */
export function runOperation(ops: Operations, operation: AdminOperation<unknown, unknown>, raw: RawInput): unknown {
  return operation.run(ops, checkedInput(operation, raw, ops.config));
}

/** The path's parameters checked against the entry's schema, by the names the path gives them. */
function checkedIds(path: string, params: InputSchema<unknown, unknown>['params'], ids: string[]): string[] {
  if (params === undefined) return ids;
  const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
  const parsed = parse(params, Object.fromEntries(names.map((n, i) => [n, ids[i]])));
  return names.map((n) => parsed[n] as string);
}

function checkedInput(
  { schema: named, body: reads, path }: AdminOperation<unknown, unknown>,
  raw: RawInput,
  config: Config,
): CommandInput<unknown, unknown> {
  if (named === undefined) return raw;
  const schema = named(schemas, config);
  const body = reads === 'optional' ? (raw.body ?? {}) : raw.body;
  return {
    ...raw,
    ids: checkedIds(path, schema.params, raw.ids),
    // The query first: a request wrong in both is answered about its query, as before.
    query: schema.query === undefined ? raw.query : parse(schema.query, raw.query),
    body:
      schema.body === undefined
        ? raw.body
        : schema.plan
          ? accountInput(schema.body, body, config.plans)
          : parse(schema.body, body, schema.invalid),
  };
}
