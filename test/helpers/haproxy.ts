/**
 * HAProxy (Debian's `haproxy`) for end-to-end tests: started in the foreground (`-db`) with a
 * configuration the test wrote, on loopback ports the test chose. Its stderr carries the server
 * state changes (`Server certsmith/ca2 is DOWN, reason: …`), which tests await instead of sleeping.
 * Every started HAProxy is tracked so `stopAllHaproxy()` in `afterAll` leaves nothing running.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { waitForPort } from '../peers/free-port.js';
import { killChildren } from './child-processes.js';

/** The haproxy program: on PATH, else Debian's /usr/sbin (not on every user's PATH). */
function haproxyProgram(): string {
  if (spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).status === 0) return 'haproxy';
  if (existsSync('/usr/sbin/haproxy')) return '/usr/sbin/haproxy';
  throw new Error('haproxy not found: install Debian package "haproxy" (tools/ensure-system-deps.sh)');
}

const children = new Set<ChildProcess>();

/** A running HAProxy. */
export interface HaproxyProcess {
  /** `http://127.0.0.1:<port>` of its frontend. */
  readonly url: string;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /**
   * Resolve with the first stderr line matching `pattern`, among those written from character `from`
   * on (default 0: every line, past or future; pass `stderr().length` to wait for a new one); reject
   * after `timeoutMs` or when HAProxy exits.
   */
  waitForLog(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<string>;
  /** SIGTERM and wait for the exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/** Check a configuration with `haproxy -c`; resolves with its output, rejects with it when invalid. */
export async function checkHaproxyConfig(configFile: string): Promise<string> {
  const child = spawn(haproxyProgram(), ['-c', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`haproxy -c -f ${configFile} exited ${code}:\n${output}`);
  return output;
}

/**
 * Write `config` to `configFile` and run HAProxy on it; resolves once its frontend (`frontendPort`,
 * which the configuration must bind on 127.0.0.1) accepts connections.
 */
export async function startHaproxy(config: string, configFile: string, frontendPort: number): Promise<HaproxyProcess> {
  await writeFile(configFile, config);
  await checkHaproxyConfig(configFile);
  const child = spawn(haproxyProgram(), ['-db', '-f', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      children.delete(child);
      for (const listener of listeners) listener();
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForPort(frontendPort, 15_000);
  } catch (error) {
    await stop();
    throw new Error(`haproxy did not listen on 127.0.0.1:${frontendPort}: ${(error as Error).message}\n${stderr}`);
  }
  return {
    url: `http://127.0.0.1:${frontendPort}`,
    stderr: () => stderr,
    waitForLog(pattern, { from = 0, timeoutMs = 20_000 } = {}) {
      const find = (): string | undefined => stderr.slice(from).split('\n').find((line) => pattern.test(line));
      const found = find();
      if (found !== undefined) return Promise.resolve(found);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`haproxy logged no line matching ${pattern} within ${timeoutMs} ms; stderr:\n${stderr}`));
        }, timeoutMs);
        const listener = (): void => {
          const line = find();
          if (line === undefined && child.exitCode === null && child.signalCode === null) return;
          clearTimeout(timer);
          listeners.delete(listener);
          if (line !== undefined) resolve(line);
          else reject(new Error(`haproxy exited before logging a line matching ${pattern}; stderr:\n${stderr}`));
        };
        listeners.add(listener);
      });
    },
    stop,
  };
}

/** Stop every HAProxy still running (SIGKILL), bounded. For `afterAll`. */
export async function stopAllHaproxy(): Promise<void> {
  await killChildren(children);
}
