import { spawn, type ChildProcess } from 'node:child_process';
import { findFreePort, waitForPort } from './free-port.js';

/** A running Debian `cfssl serve` (CFSSL 1.2.0) on 127.0.0.1, the reference the differential tests compare with. */
export interface CfsslPeer {
  url: string;
  port: number;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** Flags passed to `cfssl serve` (file paths); omitted ones are not passed. */
export interface CfsslServeOptions {
  ca?: string;
  caKey?: string;
  caBundle?: string;
  intBundle?: string;
  metadata?: string;
  config?: string;
  /** `-db-config`: CFSSL's certificate database (newcert and sign record their rows). */
  dbConfig?: string;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, 3_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function startPeer(command: string, args: string[], port: number, cwd?: string): Promise<CfsslPeer> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const peer: CfsslPeer = {
    url: `http://127.0.0.1:${port}`,
    port,
    output: () => output,
    stop: () => stopProcess(child),
  };
  return waitForPort(port).then(
    () => peer,
    async (error: unknown) => {
      await peer.stop();
      throw new Error(`${command} did not start: ${String(error)}\n${output}`);
    },
  );
}

/** Start `cfssl serve` on a free loopback port. */
export async function startCfsslServe(options: CfsslServeOptions): Promise<CfsslPeer> {
  const port = await findFreePort();
  const args = ['serve', '-address', '127.0.0.1', '-port', String(port)];
  const flags: Array<[keyof CfsslServeOptions, string]> = [
    ['ca', '-ca'],
    ['caKey', '-ca-key'],
    ['caBundle', '-ca-bundle'],
    ['intBundle', '-int-bundle'],
    ['metadata', '-metadata'],
    ['config', '-config'],
    ['dbConfig', '-db-config'],
  ];
  for (const [key, flag] of flags) {
    const value = options[key];
    if (value) args.push(flag, value);
  }
  return await startPeer('cfssl', args, port);
}

/** Start `multirootca` with a roots file (INI, see behaviour doc 4.6) and default label. */
export async function startMultirootca(options: { rootsFile: string; defaultLabel?: string; cwd?: string }): Promise<CfsslPeer> {
  const port = await findFreePort();
  const args = ['-a', `127.0.0.1:${port}`, '-roots', options.rootsFile];
  if (options.defaultLabel) args.push('-l', options.defaultLabel);
  return await startPeer('multirootca', args, port, options.cwd);
}
