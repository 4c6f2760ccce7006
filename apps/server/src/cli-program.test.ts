import { describe, expect, it } from 'vitest';
import type { CommanderError } from 'commander';
import { normalizeCfsslFlags, parseLogLevel } from './cli-program.js';
import { parseServe } from './test-support/parse-serve.js';

/** Parse `serve` arguments without starting anything; usage errors come back as CommanderError. */

describe('normalizeCfsslFlags', () => {
  it('rewrites known single-dash long flags, with and without =value', () => {
    expect(normalizeCfsslFlags(['serve', '-ca-key', 'k.pem', '-port=0', '--address', '::1'])).toEqual([
      'serve',
      '--ca-key',
      'k.pem',
      '--port=0',
      '--address',
      '::1',
    ]);
  });

  it('leaves unknown flags, values and everything after -- alone', () => {
    expect(normalizeCfsslFlags(['-bogus', '-h', 'x', '--', '-port'])).toEqual(['-bogus', '-h', 'x', '--', '-port']);
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
    [['--workers', '0'], 'commander.invalidArgument'],
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
