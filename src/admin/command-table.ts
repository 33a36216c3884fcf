/**
 * The shape of an operator command: one entry says how the CLI names it (its words, arguments,
 * options and help lines) and the admin operation it runs (HTTP method, path, status and the
 * call). The admin router, the CLI parser, its dispatch and `--help` are all read from the table
 * (commands.ts), so a new command is one entry.
 */
import type { Operations } from './operations.js';

export type Method = 'POST' | 'PUT' | 'GET' | 'PATCH' | 'DELETE';

/** What an operation is given, by the admin API (path, body, query, peer) or the CLI (its options, "cli"). */
export interface CommandInput {
  /** The path's parameters in order (`:id`, `:key`), or the CLI's arguments for them. */
  ids: string[];
  body: unknown;
  query: Record<string, string | string[]>;
  /** Who asks, for the audit line: a remote address, or "cli". */
  from: string;
}

/** An admin operation: its route, its success status, the body it reads, and the call. */
export interface AdminOperation {
  method: Method;
  /** `:name` is one path segment (`:date` any segment, the others `[\w-]+`). */
  path: string;
  status: 200 | 201 | 202 | 204;
  /** A JSON body it requires, or reads when the request has one. */
  body?: 'json' | 'optional';
  /** Validation is the operation's own (admin/input.ts and the schemas it names), shared by both doors. */
  run(ops: Operations, input: CommandInput): Promise<unknown> | unknown;
}

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
  input(cli: CliArgs): Partial<Omit<CommandInput, 'from'>>;
  /** What the CLI prints of the operation's answer, when not the answer itself. */
  print?(answer: unknown): unknown;
  operation: AdminOperation;
}

/** A command line no command accepts: exit 2, with one line naming what is wrong. */
export class UsageError extends Error {}
