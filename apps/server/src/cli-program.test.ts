import { describe, expect, it } from 'vitest';
import type { Command, CommanderError } from 'commander';
import { VERSION, createProgram, parseLogLevel } from './cli-program.js';
import { parseServe } from './test-support/parse-serve.js';

/** Parse `serve` arguments without starting anything; usage errors come back as CommanderError. */

describe('createProgram: one Go-style flag shim for every command', () => {
  /** Every command of the program, by its path (`config check`). */
  function commandsOf(command: Command, path: string[] = []): Array<[string, Command]> {
    return command.commands.flatMap((sub) => [[[...path, sub.name()].join(' '), sub] as [string, Command], ...commandsOf(sub, [...path, sub.name()])]);
  }

  it('rewrites single-dash long flags for serve, with and without =value, and leaves unknown ones to fail', async () => {
    await expect(parseServe(['-ca-key', 'k.pem', '-ca', 'c.pem', '-port=0', '--address', '::1'])).resolves.toMatchObject({ caKeyFile: 'k.pem', caFile: 'c.pem', port: 0, address: '::1' });
    await expect(parseServe(['-bogus'])).rejects.toMatchObject({ code: 'commander.unknownOption' });
  });

  it('gives every command, subcommands included, the same shim', () => {
    const program = createProgram({ serve: async () => {} });
    const unwrapped = commandsOf(program).filter(([, command]) => {
      const longs = command.options.filter((option) => option.long && !option.negate);
      if (longs.length === 0) return false;
      // The shim turns `-name` into `--name`; commander alone would read it as short flags.
      const name = longs[0]!.long!.slice(2);
      const parsed = command.parseOptions([`-${name}`, ...(longs[0]!.required ? ['value'] : [])]);
      return parsed.unknown.length > 0;
    });
    expect(unwrapped.map(([path]) => path)).toEqual([]);
    expect(commandsOf(program).map(([path]) => path)).toEqual(expect.arrayContaining(['serve', 'gencert', 'config check', 'hsm genkey', 'split']));
  });

  it("reads the program's own -version before the subcommand, and leaves the subcommand's flags to it", async () => {
    let out = '';
    const program = createProgram({ serve: async () => {} }).exitOverride().configureOutput({ writeOut: (text) => void (out += text) });
    await expect(program.parseAsync(['-version'], { from: 'user' })).rejects.toMatchObject({ code: 'commander.version' });
    expect(out).toBe(`${VERSION}\n`);
    // `serve` is the first operand: everything after it is serve's to rewrite.
    await expect(parseServe(['-metrics-address', '127.0.0.1:0'])).resolves.toMatchObject({ metricsAddress: '127.0.0.1:0' });
  });
});

describe('serve --workers', () => {
  it('takes 0: no worker threads, every task on the event loop', async () => {
    await expect(parseServe(['--workers', '0'])).resolves.toEqual({ workers: 0 });
    await expect(parseServe(['-workers=2'])).resolves.toEqual({ workers: 2 });
  });
});

describe('serve --key-pool', () => {
  it('parses per-spec sizes', async () => {
    await expect(parseServe(['--key-pool', 'rsa-2048=64, ecdsa-256=8'])).resolves.toMatchObject({ keyPool: { 'rsa-2048': 64, 'ecdsa-256': 8 } });
  });

  it.each(['rsa-1024=4', 'rsa-2048', 'dsa-1024=2', 'rsa-2048=-1', 'rsa-2048=1,rsa-2048=2'])('refuses %s as a usage error', async (value) => {
    await expect(parseServe(['--key-pool', value])).rejects.toMatchObject({ code: 'commander.invalidArgument' });
  });
});

describe('createProgram serve', () => {
  it('maps every flag to ServerOptionsInput', async () => {
    await expect(
      parseServe([
        '-address', '0.0.0.0', '-port', '0', '-config', 'c.json', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem',
        '-ca-bundle', 'roots.crt', '-int-bundle', 'ints.crt', '-metadata', 'meta.json', '--workers', '3',
        '--data-dir', '/tmp/d', '-loglevel', '0', '--max-body', '2048', '--max-queue', '5',
        '-headers-timeout', '5000', '--body-timeout', '7000', '--max-connections', '64',
      ]),
    ).resolves.toEqual({
      address: '0.0.0.0',
      port: 0,
      configFile: 'c.json',
      caFile: 'ca.pem',
      caKeyFile: 'ca-key.pem',
      caBundleFile: 'roots.crt',
      intBundleFile: 'ints.crt',
      metadataFile: 'meta.json',
      workers: 3,
      dataDir: '/tmp/d',
      logLevel: 'debug',
      maxBodyBytes: 2048,
      maxQueue: 5,
      headersTimeoutMs: 5000,
      bodyTimeoutMs: 7000,
      maxConnections: 64,
    });
  });

  it('leaves unset flags out so defaults are applied in one place', async () => {
    await expect(parseServe([])).resolves.toEqual({});
  });

  it.each([
    [['--bogus'], 'commander.unknownOption'],
    [['-bogus'], 'commander.unknownOption'],
    [['extra'], 'commander.excessArguments'],
    [['--port', '65536'], 'commander.invalidArgument'],
    [['--port', 'abc'], 'commander.invalidArgument'],
    [['--workers', '-1'], 'commander.invalidArgument'],
    [['--workers', '1025'], 'commander.invalidArgument'],
    [['--loglevel', 'loud'], 'commander.invalidArgument'],
  ])('rejects %j as a usage error with exit code 1', async (args, code) => {
    const error = (await parseServe(args).catch((caught: unknown) => caught)) as CommanderError;
    expect(error).toMatchObject({ code, exitCode: 1 });
  });
});

describe('parseLogLevel', () => {
  it('maps CFSSL numeric levels and accepts pino names', () => {
    expect(['0', '1', '2', '3', '4', '5'].map(parseLogLevel)).toEqual(['debug', 'info', 'warn', 'error', 'fatal', 'fatal']);
    expect(parseLogLevel('WARN')).toBe('warn');
  });
});
