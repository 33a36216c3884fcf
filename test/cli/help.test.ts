import t from 'tap';
import { OPERATOR_COMMANDS } from '../../src/admin/commands.js';
import { spawnCli } from '../helpers/cli.js';

t.test('fuel-gateway --help names every operator command and each of its options; exit 0', async (t) => {
  const help = await spawnCli(['--help']);
  t.equal(help.code, 0);
  t.equal(help.stderr, '');
  const lines = help.stdout.split('\n');
  for (const c of OPERATOR_COMMANDS) {
    const [group, verb] = c.words;
    // `accounts show|disable|enable|delete ID` names four commands.
    const line = lines.find((l) => new RegExp(`fuel-gateway ${group} (\\S+\\|)?${verb}(\\||\\s|$)`).test(l));
    t.ok(line, `${group} ${verb} has its line`);
    const i = lines.indexOf(line as string);
    // The options may go on to the next lines of the same command.
    const text = lines.slice(i, i + 2).join('\n');
    for (const o of [...(c.options ?? []), ...(c.flags ?? [])]) t.match(text, `--${o}`, `${group} ${verb}: --${o}`);
  }
});
