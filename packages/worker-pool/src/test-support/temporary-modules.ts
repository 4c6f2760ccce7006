/**
 * ES module files written to a fresh temporary directory, for tests of what a worker imports by URL
 * (init hooks, bundled-module lookups).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Writes modules into one temporary directory and names them by file URL. */
export interface TemporaryModules {
  /** Write `source` as the module `name` and return its file URL. */
  write(name: string, source: string): string;
  /** The file URL `name` has in the directory, written or not. */
  url(name: string): string;
}

/** A new temporary directory (its name starting with `prefix`) for modules. */
export function temporaryModules(prefix: string): TemporaryModules {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const url = (name: string): string => pathToFileURL(join(dir, name)).href;
  return {
    write(name, source) {
      writeFileSync(join(dir, name), source);
      return url(name);
    },
    url,
  };
}
