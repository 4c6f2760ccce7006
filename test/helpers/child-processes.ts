/**
 * Shared end of the e2e tests' child processes (certsmith servers, HAProxy): every child still
 * running is killed and waited for, each wait bounded, so an `afterAll` never hangs on one that
 * ignores the signal.
 */
import type { ChildProcess } from 'node:child_process';

/** SIGKILL every child in `children` still running, wait for each (at most 5 s), then forget them all. */
export async function killChildren(children: Set<ChildProcess>): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(resolve, 5000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGKILL');
        }),
    ),
  );
  children.clear();
}
