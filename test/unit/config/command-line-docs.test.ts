// docs/configuration.md "Command line" documents every command and `keys` subcommand that `slotrelay --help` offers
// (issue 30, item 5: it listed only `keys new` while --help had add|set|remove|list|revoke). Reads the built CLI's help.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ensureDistFresh } from '../telemetry/dist-fresh.js';

/** "keys add", "keys revoke", "start", ... as the help names them (alternations a|b split, `| keys list` included). */
function helpCommands(help: string): string[] {
  const out = new Set<string>();
  for (const line of help.split('\n')) {
    const m = /^\s*slotrelay ([a-z-]+)(?: ([a-z|]+))?/.exec(line);
    if (m === null) continue;
    if (m[1] === 'keys' || m[1] === 'bench') for (const sub of (m[2] ?? '').split('|')) out.add(`${m[1]} ${sub}`);
    else out.add(m[1]);
    for (const extra of line.matchAll(/\| keys ([a-z]+)/g)) out.add(`keys ${extra[1]}`);
  }
  return [...out];
}

function commandLineSection(): string {
  const doc = readFileSync('docs/configuration.md', 'utf8');
  const start = doc.indexOf('## Command line');
  return doc.slice(start, doc.indexOf('\n## ', start + 1));
}

describe('docs/configuration.md "Command line"', () => {
  const help = (() => {
    ensureDistFresh();
    return execFileSync(process.execPath, ['dist/src/cli.js', '--help'], { encoding: 'utf8' });
  })();

  it('the help offers every keys subcommand, revoked included', () => {
    const cmds = helpCommands(help);
    for (const sub of ['new', 'add', 'set', 'remove', 'list', 'revoke', 'restore', 'revoked']) expect(cmds).toContain(`keys ${sub}`);
  });

  it('documents every command of --help', () => {
    const section = commandLineSection();
    for (const c of helpCommands(help)) expect(section, `slotrelay ${c}`).toMatch(new RegExp(`slotrelay ${c.replace(' ', '\\s+')}\\b`));
  });

  it('says what a limit given without a burst gets', () => {
    expect(commandLineSection()).toMatch(/--rate-limit R\b[^\n]*burst R/i);
  });
});
