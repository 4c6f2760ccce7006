/**
 * Spawn the built `certsmith` CLI for end-to-end tests. Every child is tracked so a test file's
 * `afterAll(killAllCertsmith)` leaves nothing running; every wait is bounded.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killChildren } from './child-processes.js';

/** The built CLI (`npm test` builds before running tests). */
export const CLI_PATH = fileURLToPath(new URL('../../apps/server/dist/cli.js', import.meta.url));

const children = new Set<ChildProcess>();

/** Exit status of a finished child. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned certsmith process with its output collected line by line. */
export interface CertsmithProcess {
  readonly child: ChildProcess;
  /** stdout lines so far. */
  readonly lines: string[];
  /** stderr so far. */
  stderr(): string;
  /** Resolve with the first stdout line (past or future) matching `predicate`; reject after `timeoutMs`. */
  waitForLine(predicate: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolve when the process exits; reject after `timeoutMs`. */
  waitForExit(timeoutMs?: number): Promise<ExitStatus>;
}

/** Spawn `node cli.js …args` (in `cwd`, default this process's) without waiting for anything. */
export function spawnCertsmith(args: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): CertsmithProcess {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  let partial = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    let newline: number;
    while ((newline = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      lines.push(line);
      for (const listener of listeners) listener(line);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });

  return {
    child,
    lines,
    stderr: () => stderr,
    waitForLine(predicate, timeoutMs = 20_000) {
      const found = lines.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`no matching stdout line within ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
        }, timeoutMs);
        const listener = (line: string): void => {
          if (!predicate(line)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(line);
        };
        listeners.add(listener);
        void exited.then(() => {
          if (!listeners.has(listener)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          reject(new Error(`process exited before a matching line; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
        });
      });
    },
    waitForExit(timeoutMs = 20_000) {
      return Promise.race([
        exited,
        new Promise<never>((_, reject) => {
          setTimeout(() => reject(new Error(`process did not exit within ${timeoutMs} ms`)), timeoutMs).unref();
        }),
      ]);
    },
  };
}

/** A started server: the process and the URL it printed. */
export interface StartedCertsmith extends CertsmithProcess {
  readonly url: string;
}

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;

/** Spawn `certsmith serve …args` (with `env`, default this process's) and wait for its `certsmith listening on <url>` line. */
export async function startCertsmith(args: readonly string[], timeoutMs = 20_000, env: NodeJS.ProcessEnv = process.env): Promise<StartedCertsmith> {
  const server = spawnCertsmith(['serve', ...args], env);
  const line = await server.waitForLine((candidate) => LISTENING.test(candidate), timeoutMs);
  return Object.assign(server, { url: LISTENING.exec(line)![1]! });
}

/** Kill every child still running (SIGKILL) and wait for them, bounded. For `afterAll`. */
export async function killAllCertsmith(): Promise<void> {
  await killChildren(children);
}

/** Parse a JSON log line, or `null` for other lines (like the human `listening` line). */
export function parseLogLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/**
 * The JSON log lines of `lines` that match `predicate`, grouped by the process that wrote them
 * (`pid`; a server of one process writes none, its lines form one group), in order of first line.
 * With `serve --processes N` every serving process logs its own start-up (config warnings, signers
 * loaded), so a test of what one start-up logs checks each group.
 */
export function logLinesByProcess(lines: readonly string[], predicate: (line: Record<string, unknown>) => boolean): Array<Array<Record<string, unknown>>> {
  const groups = new Map<unknown, Array<Record<string, unknown>>>();
  for (const line of lines.map(parseLogLine)) {
    if (line === null || !predicate(line)) continue;
    const group = groups.get(line['pid']);
    if (group === undefined) groups.set(line['pid'], [line]);
    else group.push(line);
  }
  return [...groups.values()];
}
