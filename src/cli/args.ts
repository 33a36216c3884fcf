/** Minimal argv parsing: positionals and `--name value` / `--name=value` options. */
export interface Args {
  positionals: string[];
  options: Map<string, string>;
}

// Flags that take no value: `--all` reads as all=true.
const FLAGS = new Set(['all']);

export function parseArgs(argv: string[]): Args {
  const positionals: string[] = [];
  const options = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    if (FLAGS.has(arg.slice(2))) {
      options.set(arg.slice(2), 'true');
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
