import { parseArgs as parseArgv } from 'node:util';
import { UsageError } from '../admin/command-table.js';
import { OPERATOR_COMMANDS } from '../admin/commands.js';

/** A command line as parsed against its command: the command's words and arguments, and its options. */
export interface Args {
  /** The command's words (`accounts`, `create`), then its arguments. */
  positionals: string[];
  options: Map<string, string>;
}

/** One command of the CLI: its words, the names of the arguments it takes, and its options. */
export interface Command {
  words: readonly string[];
  args: readonly string[];
  options: readonly string[];
  /** Options taking no value: `--all` reads as all=true. */
  flags?: readonly string[];
}

/**
 * Every command, with what it accepts: the CLI's own, then the operator commands' table. The
 * parser refuses anything else, so a typo (`--lable`) cannot pass as a command that silently did
 * less than was asked.
 */
export const COMMANDS: readonly Command[] = [
  { words: ['serve'], args: [], options: [] },
  { words: ['help'], args: [], options: [] },
  { words: ['config', 'check'], args: [], options: [] },
  { words: ['config', 'reference'], args: [], options: [] },
  ...OPERATOR_COMMANDS.map((c) => ({ words: c.words, args: c.args, options: c.options ?? [], flags: c.flags ?? [] })),
];

/** Every command takes these. */
const GLOBAL_OPTIONS = ['config'];

type Spec = Record<string, { type: 'string' | 'boolean' }>;
const FLAGS = new Set(COMMANDS.flatMap((c) => c.flags ?? []));
const spec = (names: readonly string[]): Spec =>
  Object.fromEntries(names.map((n) => [n, { type: FLAGS.has(n) ? 'boolean' : 'string' }]));
const ALL_OPTIONS = spec([...GLOBAL_OPTIONS, ...COMMANDS.flatMap((c) => [...c.options, ...(c.flags ?? [])])]);

/** The command the words name: none is `serve`; an unknown one is a UsageError. */
function commandOf(words: string[]): Command {
  if (words.length === 0) return COMMANDS[0] as Command;
  const found = COMMANDS.filter((c) => c.words.every((w, i) => words[i] === w)).sort(
    (a, b) => b.words.length - a.words.length,
  )[0];
  if (found === undefined) throw new UsageError(`unknown command: ${words.slice(0, 2).join(' ')}`);
  return found;
}

/**
 * Parses argv against the command it names. Unknown options, repeated options, options without
 * their value and arguments beyond those the command takes are all named in one UsageError line.
 */
export function parseArgs(argv: string[]): Args {
  // First pass, knowing every option of every command: which command is it?
  const { tokens } = parseArgv({
    args: argv,
    options: ALL_OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const isUnknown = (name: string): boolean => !(name in ALL_OPTIONS);
  // An unknown option may have a value (`--lable x`): that is not a stray argument.
  const words = tokens.flatMap((t, i) => {
    const before = tokens[i - 1];
    const valueOfUnknown =
      before?.kind === 'option' &&
      before.inlineValue === undefined &&
      isUnknown(before.name) &&
      before.index === t.index - 1;
    return t.kind === 'positional' && !valueOfUnknown ? [t.value] : [];
  });
  const command = commandOf(words);
  const known = new Set([...GLOBAL_OPTIONS, ...command.options, ...(command.flags ?? [])]);
  const name = command.words.join(' ');
  const problems: string[] = [];
  const unknown = tokens.flatMap((t) => (t.kind === 'option' && !known.has(t.name) ? [t.rawName] : []));
  if (unknown.length > 0) problems.push(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`);
  // A repeated option is refused, not settled by the last one: `--limit 5 --limit 6` is a mistake
  // the operator should see, and the first value may be the one that was meant.
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const t of tokens)
    if (t.kind === 'option' && known.has(t.name)) (seen.has(t.name) ? repeated : seen).add(t.name);
  if (repeated.size > 0)
    problems.push(`repeated option${repeated.size > 1 ? 's' : ''} ${[...repeated].map((n) => `--${n}`).join(', ')}`);
  const stray = words.slice(command.words.length + command.args.length);
  if (stray.length > 0)
    problems.push(`unexpected argument${stray.length > 1 ? 's' : ''} ${stray.map((s) => `"${s}"`).join(', ')}`);
  if (problems.length > 0) throw new UsageError(`${name}: ${problems.join('; ')}`);
  // The strict pass decides: a missing value, a repeated `--` and the like.
  try {
    const { values, positionals } = parseArgv({
      args: argv,
      options: spec([...known]),
      strict: true,
      allowPositionals: true,
    });
    const options = new Map<string, string>();
    for (const [k, v] of Object.entries(values))
      if (typeof v === 'string') options.set(k, v);
      else if (v === true) options.set(k, 'true');
    return { positionals, options };
  } catch (err) {
    throw new UsageError(`${name}: ${(err as Error).message.split('\n')[0]}`);
  }
}
