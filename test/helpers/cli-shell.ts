/**
 * Running the built `certsmith` CLI the way a user does: bash scripts with `pipefail`, `$CS` set to
 * the CLI, in a given folder, bounded in time and output.
 */
import { execFile } from 'node:child_process';
import { CLI_PATH } from './certsmith-process.js';

/** Exit code and output of one script. */
export interface Shell {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A runner for scripts in `cwd()` (read at each call, so a suite can create its folder in
 * `beforeAll`). A script that exits non-zero resolves with its code; only a failure to run it
 * (timeout, too much output) rejects.
 */
export function cliShell(cwd: () => string): (script: string, timeoutMs?: number) => Promise<Shell> {
  return (script, timeoutMs = 90_000) =>
    new Promise((resolve, reject) => {
      execFile(
        'bash',
        ['-o', 'pipefail', '-c', script],
        { cwd: cwd(), env: { ...process.env, CS: `${process.execPath} ${CLI_PATH}` }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error !== null && typeof error.code !== 'number') reject(new Error(`${script}: ${error.message}\n${stderr}`));
          else resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
        },
      );
    });
}
