import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { CertsmithError } from '@certsmith/x509-core';
import { createReporter, errorLine, goJson, normalizeGoFlags, parseVerbosity, splitHosts } from './common.js';
import type { CommandIo } from './common.js';

const OPTIONS = [
  new Option('--ca <file>'),
  new Option('--ca-key <file>'),
  new Option('--hostname <list>'),
  new Option('--initca'),
  new Option('-f, --file <file>'),
  new Option('--bare'),
];

describe('normalizeGoFlags', () => {
  it('rewrites single-dash long flags of the command, with and without =value', () => {
    expect(normalizeGoFlags(['-ca', 'ca.pem', '-ca-key=k.pem', '--hostname', 'a,b', 'csr.json'], OPTIONS)).toEqual([
      '--ca',
      'ca.pem',
      '--ca-key',
      'k.pem',
      '--hostname',
      'a,b',
      'csr.json',
    ]);
  });

  it('takes Go boolean spellings and drops false', () => {
    expect(normalizeGoFlags(['-initca=true', '-bare=false', '-bare'], OPTIONS)).toEqual(['--initca', '--bare']);
    expect(normalizeGoFlags(['-initca=maybe'], OPTIONS)).toEqual(['-initca=maybe']);
  });

  it('never rewrites a flag value, unknown flags or anything after --', () => {
    expect(normalizeGoFlags(['-hostname', '-bare', '-bogus', '--', '-ca'], OPTIONS)).toEqual(['--hostname', '-bare', '-bogus', '--', '-ca']);
  });

  it('splits a short flag written -f=value', () => {
    expect(normalizeGoFlags(['-f=in.json', '-f', 'x'], OPTIONS)).toEqual(['-f', 'in.json', '-f', 'x']);
  });

  it('lets commander parse the rewritten arguments', async () => {
    const { acceptGoFlags } = await import('./common.js');
    let seen: unknown;
    const program = new Command().exitOverride();
    const command = program.command('x').option('--ca-key <file>').option('--initca').argument('<csr>').action((csr, flags) => {
      seen = { csr, flags };
    });
    acceptGoFlags(command);
    await program.parseAsync(['x', '-ca-key', 'k.pem', '-initca', 'csr.json'], { from: 'user' });
    expect(seen).toEqual({ csr: 'csr.json', flags: { caKey: 'k.pem', initca: true } });
  });
});

describe('goJson', () => {
  it('escapes <, >, & and the JavaScript line separators as Go does', () => {
    expect(goJson({ cn: 'a<b>&c\u2028' })).toBe('{"cn":"a\\u003cb\\u003e\\u0026c\\u2028"}');
  });

  it('indents like MarshalIndent', () => {
    expect(goJson({ a: [1] }, 2)).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});

describe('errorLine', () => {
  it("prints CFSSL's {code, message} line", () => {
    expect(errorLine(new CertsmithError(5400))).toBe('{"code":5400,"message":"Unknown policy profile"}\n');
    expect(errorLine(new Error('boom'))).toBe('{"code":0,"message":"boom"}\n');
  });
});

describe('splitHosts / parseVerbosity', () => {
  it('splits like cfssl SplitHosts', () => {
    expect(splitHosts(undefined)).toBeNull();
    expect(splitHosts('')).toBeNull();
    expect(splitHosts('a.example,10.0.0.1')).toEqual(['a.example', '10.0.0.1']);
  });

  it('maps CFSSL levels and names', () => {
    expect(parseVerbosity('1')).toBe('all');
    expect(parseVerbosity('2')).toBe('warnings');
    expect(parseVerbosity('5')).toBe('errors');
    expect(parseVerbosity('silent')).toBe('errors');
    expect(() => parseVerbosity('9')).toThrow(/expected 0-5/);
  });
});

describe('createReporter', () => {
  function io(tty: boolean): { io: CommandIo; err: string[] } {
    const err: string[] = [];
    return {
      err,
      io: {
        stdout: () => {},
        stderr: (text) => void err.push(text),
        readStdin: async () => Buffer.alloc(0),
        stderrIsTty: () => tty,
        setExitCode: () => {},
        cwd: () => '/',
        env: {},
      },
    };
  }

  it('shows progress only on a terminal', () => {
    const piped = io(false);
    createReporter(piped.io, 'gencert').progress('working');
    expect(piped.err).toEqual([]);
    const tty = io(true);
    createReporter(tty.io, 'gencert').progress('working');
    expect(tty.err).toEqual(['certsmith gencert: working\n']);
  });

  it('shows warnings unless the level is error or above', () => {
    const shown = io(false);
    createReporter(shown.io, 'sign', 'warnings').warn('careful');
    expect(shown.err).toEqual(['certsmith sign: warning: careful\n']);
    const hidden = io(false);
    createReporter(hidden.io, 'sign', 'errors').warn('careful');
    expect(hidden.err).toEqual([]);
  });
});
