/**
 * What the CFSSL-style subcommands (`gencert`, `genkey`, `sign`, `bundle`, `certinfo`, `split`,
 * `config check`) share: where they write, CFSSL's single-dash flags, Go-compatible JSON output,
 * reading files or stdin, progress and warnings on stderr, and the exit-code convention:
 *
 * - 0: success;
 * - 1: usage error — unknown flag, missing argument, a flag combination that cannot work
 *   (`gencert` without `-ca`, `-remote` or a signer). commander's `error: …` text plus the help hint;
 * - 2: the operation failed — unreadable input, bad JSON, a signing or bundling error. One JSON line
 *   on stderr in CFSSL's format, `{"code":5400,"message":"Unknown policy profile"}` (the code is the
 *   error's CFSSL code, 0 for errors outside CFSSL's scheme).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { CertsmithError, isCodedError } from '@certsmith/x509-core';

/** Exit code: success. */
export const EXIT_OK = 0;
/** Exit code: usage error (bad flags or arguments). */
export const EXIT_USAGE = 1;
/** Exit code: the operation failed (the error is on stderr as a JSON line). */
export const EXIT_FAILED = 2;

/** Where a command reads and writes; injectable for tests. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** All of stdin (for `-` arguments and `split`). */
  readStdin(): Promise<Buffer>;
  /** True when stderr is a terminal: progress lines are written only then. */
  stderrIsTty(): boolean;
  /** Set the process exit code (default `process.exitCode = code`). */
  setExitCode(code: number): void;
  /** Working directory relative paths resolve against. */
  cwd(): string;
  /** Environment for `env:` references. */
  env: Readonly<Record<string, string | undefined>>;
}

let pipeGuarded = false;

/**
 * A reader that stops early (`certsmith split -stdout | openssl x509`, `| head`) closes the pipe;
 * stop quietly then, as a command killed by SIGPIPE would, instead of crashing on EPIPE.
 */
function guardStdoutPipe(): void {
  if (pipeGuarded) return;
  pipeGuarded = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK);
    throw error;
  });
}

/** The process's stdio, working directory and environment. */
export function defaultIo(): CommandIo {
  return {
    stdout: (text) => {
      guardStdoutPipe();
      process.stdout.write(text);
    },
    stderr: (text) => void process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
      return Buffer.concat(chunks);
    },
    stderrIsTty: () => process.stderr.isTTY === true,
    setExitCode: (code) => {
      process.exitCode = code;
    },
    cwd: () => process.cwd(),
    env: process.env,
  };
}

/** `defaultIo()` with the given members replaced. */
export function resolveIo(io: Partial<CommandIo>): CommandIo {
  return { ...defaultIo(), ...io };
}

/** A usage problem found after parsing (flag combinations); exit code 1 with commander's formatting. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * JSON as Go's `encoding/json` writes it (`json.Marshal` / `MarshalIndent`): `<`, `>`, `&`, U+2028
 * and U+2029 escaped as `\u003c`…, so the bytes equal CFSSL's for the same values. Those characters
 * only ever occur inside JSON strings, so a textual replacement is exact.
 */
export function goJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** CFSSL's error line: `{"code":N,"message":"…"}` (0 for errors without a CFSSL code). */
export function errorLine(error: unknown): string {
  const code = isCodedError(error) ? error.code : 0;
  const message = error instanceof Error ? error.message : String(error);
  return `${goJson({ code, message })}\n`;
}

/**
 * Wrap a command action: a {@link UsageError} becomes commander's `error: …` (exit 1); any other
 * failure is written as {@link errorLine} on stderr with exit code 2.
 */
export function runAction<Args extends unknown[]>(command: Command, io: CommandIo, body: (...args: Args) => Promise<void>): (...args: Args) => Promise<void> {
  return async (...args: Args) => {
    try {
      await body(...args);
    } catch (error) {
      if (error instanceof UsageError) {
        command.error(`error: ${error.message}`, { exitCode: EXIT_USAGE, code: 'certsmith.usage' });
        return;
      }
      io.stderr(errorLine(error));
      io.setExitCode(EXIT_FAILED);
    }
  };
}

/** Read a file named on the command line (`-` = stdin). Unreadable → the coded error `<what>: cannot read file "x" (ENOENT)`. */
export async function readInput(path: string, io: CommandIo, what: string, code: number): Promise<Buffer> {
  if (path === '-') return io.readStdin();
  try {
    return await readFile(resolve(io.cwd(), path));
  } catch (cause) {
    throw new CertsmithError(code, `${what}: cannot read file ${JSON.stringify(path)} (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`, { cause });
  }
}

/** Parse JSON input; a syntax error is 400 with the parser's text, prefixed with what was read. */
export function parseJsonInput(text: Buffer | string, what: string): unknown {
  try {
    return JSON.parse(typeof text === 'string' ? text : text.toString('utf8'));
  } catch (cause) {
    throw new CertsmithError(400, `${what}: invalid JSON: ${(cause as Error).message}`, { cause });
  }
}

/** CFSSL `signer.SplitHosts`: `""` → no override (`null`), else the comma-separated list. */
export function splitHosts(list: string | undefined): string[] | null {
  if (list === undefined || list === '') return null;
  return list.split(',');
}

/** Verbosity from `--loglevel` (CFSSL 0–5 or a name): warnings are shown below `error`. */
export type Verbosity = 'all' | 'warnings' | 'errors';

/** Parse `--loglevel`: CFSSL's 0 (debug) … 5 (fatal), or trace|debug|info|warn|error|fatal|silent. */
export function parseVerbosity(value: string): Verbosity {
  const names: Record<string, Verbosity> = {
    '0': 'all',
    '1': 'all',
    '2': 'warnings',
    '3': 'errors',
    '4': 'errors',
    '5': 'errors',
    trace: 'all',
    debug: 'all',
    info: 'all',
    warn: 'warnings',
    warning: 'warnings',
    error: 'errors',
    fatal: 'errors',
    silent: 'errors',
  };
  const verbosity = names[value.toLowerCase()];
  if (verbosity === undefined) throw new InvalidArgumentError('expected 0-5 or one of trace, debug, info, warn, error, fatal, silent');
  return verbosity;
}

/** Progress and warnings of one command on stderr. */
export interface Reporter {
  /** A progress line, only when stderr is a terminal (never in pipelines). */
  progress(message: string): void;
  /** A warning line (`certsmith <cmd>: warning: …`) unless `--loglevel` is error or above. */
  warn(message: string): void;
}

export function createReporter(io: CommandIo, name: string, verbosity: Verbosity = 'all'): Reporter {
  return {
    progress(message) {
      if (io.stderrIsTty()) io.stderr(`certsmith ${name}: ${message}\n`);
    },
    warn(message) {
      if (verbosity !== 'errors') io.stderr(`certsmith ${name}: warning: ${message}\n`);
    },
  };
}

/** CFSSL's single-dash flags: the one shim of the whole program (`../go-flags.ts`). */
export { acceptGoFlags, normalizeGoFlags } from '../go-flags.js';

/** The `--loglevel` option every CFSSL-style command accepts (CFSSL's `-loglevel`). */
export function withLogLevel(command: Command): Command {
  return command.option('--loglevel <level>', 'CFSSL 0-5 or a level name; 3 (error) and above hide warnings', parseVerbosity);
}
