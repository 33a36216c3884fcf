/**
 * The shape of an operator command: one entry says how the CLI names it (its words, arguments,
 * options and help lines) and the admin operation it runs (HTTP method, path, status, the
 * schemas of its input and the call). The admin router, the CLI parser, its dispatch and
 * `--help` are all read from the table (commands.ts), so a new command is one entry.
 */
// Types only: `--help` loads the table without zod (input.ts loads the schemas and applies them).
import type { z } from 'zod';
import type { Config } from '../config/config-schema.js';
import type { InvalidKind } from './input.js';
import type * as Schemas from './input-schemas.js';
import type { Operations } from './operations.js';

export type Method = 'POST' | 'PUT' | 'GET' | 'PATCH' | 'DELETE';

/** A query string as a record; a parameter given twice is an array. */
export type RawQuery = Record<string, string | string[]>;

/**
 * What an operation is given, by the admin API (path, body, query, peer) or the CLI (its options,
 * "cli"): the body and query as the entry's schemas made them, as given where it has none.
 */
export interface CommandInput<B = unknown, Q = RawQuery> {
  /** The path's parameters in order (`:id`, `:key`), or the CLI's arguments for them. */
  ids: string[];
  body: B;
  query: Q;
  /** Who asks, for the audit line: a remote address, or "cli". */
  from: string;
}

/** The input before the schemas: the admin API's request or the CLI's options. */
export type RawInput = CommandInput<unknown, RawQuery>;

/**
 * The schemas of an operation's input, as fastify's `schema` on a route: the admin router and the
 * CLI check the body and query with them once (admin/input.ts `checkedInput`), a 400 naming each
 * bad field, and the operation is given what they parse.
 */
export interface InputSchema<B, Q> {
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** The path's parameters, as an object named by the path (`:date` is `date`): `ids` keeps their order. */
  params?: z.ZodType<Record<string, string>>;
  /** The body may name a plan: an unknown one is named beside the schema's problems (it cannot know the configured plans). */
  plan?: true;
  /** The error kind of a bad body, when not BAD_REQUEST (a price set is PRICE_SET_INVALID). */
  invalid?: InvalidKind;
}

/** An admin operation: its route, its success status, the body it reads, its input's schemas, and the call. */
export interface AdminOperation<B = unknown, Q = RawQuery> {
  method: Method;
  /** `:name` is one path segment (`:date` and `:email` any segment, the others `[\w-]+`). */
  path: string;
  status: 200 | 201 | 202 | 204;
  /** A JSON body it requires, or reads when the request has one (none read is `{}` to its schema). */
  body?: 'json' | 'optional';
  /**
   * Its input's schemas, named from input-schemas.ts (`(s) => ({ body: s.createKeyInput })`),
   * some made for the configuration (a time zone); without them the body and query come as
   * given, and the operation checks what it reads.
   */
  schema?(schemas: typeof Schemas, config: Config): InputSchema<B, Q>;
  run(ops: Operations, input: CommandInput<B, Q>): Promise<unknown> | unknown;
}

/**
 * An operation whose `run` is given the types its schemas parse (inferred from them, not from
 * the table it goes in): without a query schema, the query as given.
 */
export const operation = <B = unknown, Q = RawQuery>(o: AdminOperation<B, Q>): AdminOperation<NoInfer<B>, NoInfer<Q>> =>
  o;

/** The CLI's arguments after the command's words, and its options (`--all` reads as "true"). */
export interface CliArgs {
  args: string[];
  options: Map<string, string>;
}

/** One operator command: the CLI verb and the admin operation it runs. */
export interface OperatorCommand {
  words: readonly [string, string];
  /** The names of the arguments it takes, as the help shows them. */
  args: readonly string[];
  /** Options taking a value. */
  options?: readonly string[];
  /** Options taking none (`--all`). */
  flags?: readonly string[];
  /**
   * Its lines of `--help`, after `fuel-gateway `; none when the line of a command before it
   * names it too (`accounts show|disable|enable|delete ID`).
   */
  help?: string;
  /** The operation's input from the command line; unset fields are empty. */
  input(cli: CliArgs): Partial<Omit<RawInput, 'from'>>;
  /** What the CLI prints of the operation's answer, when not the answer itself. */
  print?(answer: unknown): unknown;
  operation: AdminOperation<unknown, unknown>;
}

/** A command line no command accepts: exit 2, with one line naming what is wrong. */
export class UsageError extends Error {}
