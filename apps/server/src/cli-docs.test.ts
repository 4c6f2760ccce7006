/**
 * The docs follow the CLI: every flag table of the docs is checked against the CLI's own definitions
 * (commander's options), so a flag missing from the docs, or documented but not accepted, fails
 * here. Tables are marked `<!-- flags: certsmith <command> -->` in apps/server/README.md; the
 * flag-by-flag table of docs/migrating-from-cfssl.md is checked against `serve`. Also here: the
 * error the README shows for a missing `-ca` is the one `gencert` prints, and every CFSSL key
 * certsmith does not implement is in docs/configuration.md's table.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { UNSUPPORTED_CFSSL_KEYS } from '@certsmith/issuer';
import { describe, expect, it } from 'vitest';
import { createProgram } from './cli-program.js';
import { registerGencertCommand } from './commands/gencert.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = await readFile(join(ROOT, 'apps/server/README.md'), 'utf8');
const MIGRATING = await readFile(join(ROOT, 'docs/migrating-from-cfssl.md'), 'utf8');
const CONFIGURATION = await readFile(join(ROOT, 'docs/configuration.md'), 'utf8');

/** Every command with its path: `certsmith`, `certsmith serve`, `certsmith config check`… */
function commands(command: Command, path = 'certsmith'): Array<[string, Command]> {
  return [[path, command], ...command.commands.flatMap((sub) => commands(sub, `${path} ${sub.name()}`))];
}

/** The long flags a command accepts, its help option included (`--ca-key`, `--help`). */
function acceptedFlags(command: Command): string[] {
  return command
    .createHelp()
    .visibleOptions(command)
    .map((option) => option.long!)
    .sort();
}

/** The rows of the markdown table that starts right after `marker` (header and separator dropped). */
function tableAfter(text: string, marker: string): string[][] | null {
  const start = text.indexOf(marker);
  if (start < 0) return null;
  const lines = text.slice(start + marker.length).replace(/^\n/, '').split('\n');
  const rows: string[][] = [];
  for (const line of lines) {
    if (!line.startsWith('|')) break;
    rows.push(line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
  }
  return rows.slice(2);
}

/** `--flag` names written in backticks in a table cell (`` `--tls-cert FILE` ``, `` `--help`, `--version` ``). */
function flagsIn(cell: string): string[] {
  return [...cell.matchAll(/`([^`]*)`/g)].flatMap((span) => [...span[1]!.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((match) => match[0]));
}

const program = createProgram({ serve: async () => {} });
/** Commands that have flags of their own: the program, and every command without subcommands. */
const documented = commands(program).filter(([path, command]) => path === 'certsmith' || command.commands.length === 0);

describe('apps/server/README.md flag tables', () => {
  it.each(documented.map(([path]) => [path]))('lists exactly the flags %s accepts', (path) => {
    const command = documented.find(([candidate]) => candidate === path)![1];
    const rows = tableAfter(README, `<!-- flags: ${path} -->`);
    expect(rows, `no table marked <!-- flags: ${path} --> in apps/server/README.md`).not.toBeNull();
    const listed = rows!.flatMap((row) => flagsIn(row[0] ?? '')).sort();
    expect(listed).toEqual(acceptedFlags(command));
  });

  it('marks no table for a command that does not exist', () => {
    const marked = [...README.matchAll(/<!-- flags: ([^>]+?) -->/g)].map((match) => match[1]!);
    expect(marked.filter((path) => !documented.some(([candidate]) => candidate === path))).toEqual([]);
  });
});

describe('docs/migrating-from-cfssl.md', () => {
  it("maps every serve flag, and names no certsmith flag serve does not accept", () => {
    const rows = tableAfter(MIGRATING, '## `cfssl serve` flags\n');
    expect(rows).not.toBeNull();
    const serve = acceptedFlags(documented.find(([path]) => path === 'certsmith serve')![1]).filter((flag) => flag !== '--help');
    // A row's certsmith column is its flags, or "same" for CFSSL's own (`-ca-bundle` → `--ca-bundle`).
    const certsmithFlags = (row: string[]): string[] =>
      (row[1] ?? '').startsWith('same')
        ? [...(row[0] ?? '').matchAll(/`([^`]*)`/g)].flatMap((span) => [...span[1]!.matchAll(/(?<![\w-])-([a-z][a-z0-9-]+)/g)].map((match) => `--${match[1]}`))
        : flagsIn(row[1] ?? '');
    const mapped = [...new Set(rows!.flatMap(certsmithFlags))].sort();
    expect(mapped).toEqual(serve);
  });
});

describe('gencert with a missing -ca file', () => {
  it('prints the error the README shows, in the form serve uses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'certsmith-docs-'));
    try {
      await writeFile(join(dir, 'csr.json'), JSON.stringify({ CN: 'docs.example', hosts: ['docs.example'] }));
      await writeFile(join(dir, 'ca-key.pem'), 'not read: -ca is checked first');
      let stderr = '';
      let exitCode: number | undefined;
      const cli = new Command('certsmith').exitOverride();
      registerGencertCommand(cli, { stderr: (text) => void (stderr += text), stdout: () => {}, setExitCode: (code) => void (exitCode = code), cwd: () => dir });
      await cli.parseAsync(['gencert', '-ca', 'missing-ca.pem', '-ca-key', 'ca-key.pem', 'csr.json'], { from: 'user' });
      expect(exitCode).toBe(2);
      expect(README).toContain(`$ certsmith gencert -ca missing-ca.pem -ca-key ca-key.pem csr.json\n${stderr}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('docs/configuration.md', () => {
  it('lists every CFSSL key certsmith does not implement', () => {
    const section = CONFIGURATION.slice(CONFIGURATION.indexOf('## CFSSL keys certsmith does not implement'));
    const rows = tableAfter(section, 'Nothing is ignored silently.\n');
    expect(rows).not.toBeNull();
    const listed = rows!.flatMap((row) => [...(row[0] ?? '').matchAll(/`([A-Za-z_]+)`/g)].map((match) => match[1]!)).sort();
    expect(listed).toEqual(UNSUPPORTED_CFSSL_KEYS.map((entry) => entry.key).sort());
  });
});
