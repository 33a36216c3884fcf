/** Minimal argv parsing: positionals and `--name value` / `--name=value` options. */
export interface Args {
  positionals: string[];
  options: Map<string, string>;
}

export function parseArgs(argv: string[]): Args {
  const positionals: string[] = [];
  const options = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq !== -1) {
      options.set(arg.slice(2, eq), arg.slice(eq + 1));
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${arg} needs a value`);
    options.set(arg.slice(2), value);
    i++;
  }
  return { positionals, options };
}

/** One command of the CLI: its words, the names of the arguments it takes, and its options. */
export interface Command {
  words: readonly string[];
  args: readonly string[];
  options: readonly string[];
}

const ID = ['ID'];
const LIST = ['status', 'plan', 'label', 'limit', 'cursor'];
const EXPORT = ['from', 'to', 'account', 'format', 'out'];

/**
 * Every command, with what it accepts. The parser refuses anything else, so a typo (`--lable`)
 * cannot pass as a command that silently did less than was asked.
 */
export const COMMANDS: readonly Command[] = [
  { words: ['serve'], args: [], options: [] },
  { words: ['help'], args: [], options: [] },
  { words: ['config', 'check'], args: [], options: [] },
  { words: ['config', 'reference'], args: [], options: [] },
  { words: ['accounts', 'create'], args: [], options: ['plan', 'label', 'limit', 'anchor', 'status'] },
  { words: ['accounts', 'list'], args: [], options: LIST },
  ...['show', 'disable', 'enable', 'rotate-key', 'delete'].map((verb) => ({
    words: ['accounts', verb],
    args: ID,
    options: [],
  })),
  { words: ['accounts', 'set-plan'], args: ['ID', 'PLAN'], options: ['limit'] },
  { words: ['prices', 'publish'], args: ['FILE'], options: [] },
  { words: ['prices', 'cancel'], args: ['DATE'], options: [] },
  { words: ['prices', 'show'], args: [], options: [] },
  { words: ['prices', 'history'], args: [], options: [] },
  { words: ['usage', 'export'], args: [], options: EXPORT },
  { words: ['usage', 'periods'], args: [], options: EXPORT },
  { words: ['cache', 'purge'], args: [], options: ['path'] },
  { words: ['webhooks', 'add'], args: ['URL'], options: ['events', 'account', 'description'] },
  { words: ['webhooks', 'list'], args: [], options: [] },
  ...['remove', 'rotate-secret', 'test'].map((verb) => ({ words: ['webhooks', verb], args: ID, options: [] })),
  { words: ['webhooks', 'deliveries'], args: ID, options: ['limit'] },
];

