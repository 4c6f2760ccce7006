/**
 * Resident memory of a process, for the e2e tests that check the server does not grow under load
 * or slow clients. Read from Linux's `/proc/<pid>/status` (VmRSS, what `ps -o rss` shows), so that
 * sampling between bursts spawns no process of its own.
 */
import { readFileSync } from 'node:fs';

/** VmRSS of process `pid`, in bytes. Throws when the process is gone or the line is missing. */
export function residentSetBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}
