#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 node --max-semi-space-size=4 --single-threaded-gc
// The `certsmith` command. npm links a package's `bin` when it installs the package, and skips a bin
// whose file does not exist yet: pointing `bin` at the compiled `dist/cli.js` left a fresh clone
// without the command after `npm ci` (dist/ is built afterwards). This file is committed, so the link
// is always made; it runs the compiled CLI (the V8 flags above are explained in src/cli.ts).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(`certsmith: not built yet (${fileURLToPath(cli)} is missing): run "npm run build" in the repository\n`);
  process.exit(1);
}
await import(cli.href);
