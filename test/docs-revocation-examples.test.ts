/**
 * Every example of `docs/revocation.md` runs, in page order, against the built CLI and the real tools
 * the page uses (openssl, curl, jq, SoftHSM2, PostgreSQL where the page starts one). Markers
 * (`test/helpers/doc-examples.ts`):
 *
 * | marker | block | what this test does |
 * |---|---|---|
 * | `run` | sh | bash `-e -o pipefail` in the page's folder, one shell session per page (variables carry over), `certsmith` on PATH; documented `localhost:PORT` / `127.0.0.1:PORT` of a server started by a `serve` block are mapped to its real port; exit 0, and every JSON envelope printed says `success: true` |
 * | `run, expect C1 C2…` | sh | the same, but the envelopes printed must be errors with these codes, in order |
 * | `output` | text | every non-empty line of the block is a line (trimmed) of what the previous `run` printed (stdout and stderr) |
 * | `file NAME` | any | writes the block to NAME in the page's folder |
 * | `serve` | sh | starts the one `certsmith serve` / `certsmith ocspserve` command of the block in the background (a free port in place of the documented one — `-port N`, or 8888 — a data dir and one worker for `serve`), in the session's environment, and waits until it listens; a server already on that documented port is stopped first |
 *
 * Servers listen on 127.0.0.1 only and are stopped at the end.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, killAllCertsmith, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { jsonValues, kind, markedBlocks, runShell, unmarkedFences } from './helpers/doc-examples.js';
import type { Block } from './helpers/doc-examples.js';
import { findFreePort } from './peers/free-port.js';

const PAGE_PATH = fileURLToPath(new URL('../docs/revocation.md', import.meta.url));
const PAGE = await readFile(PAGE_PATH, 'utf8');
const blocks = markedBlocks(PAGE);

let dir: string;
let bin: string;
/** Documented port → the server started for it. */
const servers = new Map<number, { process: CertsmithProcess; port: number }>();
let lastOutput = '';

/**
 * Save the shell's variables (exported or not, as in one interactive session) for the next block:
 * every variable except bash's own and read-only ones.
 */
const SAVE_SESSION = `for name in $(compgen -v); do
  case $name in BASH*|PWD|OLDPWD|SHLVL|_|PPID|UID|EUID|GROUPS|FUNCNAME|RANDOM|SRANDOM|LINENO|SECONDS|EPOCH*|HISTCMD|PIPESTATUS|DIRSTACK|SHELLOPTS|COMP_*|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|IFS|PS1|PS2|PS4|OPTIND|OPTARG|OPTERR|name) continue ;; esac
  declare -p "$name" 2>/dev/null | grep -v '^declare -[a-zA-Z]*r' || true
done > .session.env
`;

/** The session's environment (exports of earlier blocks), as `serve` blocks need it. */
async function sessionEnv(): Promise<NodeJS.ProcessEnv> {
  const result = await runShell('[ -f .session.env ] && source .session.env; env -0', dir, 10_000, { ...process.env, PATH: `${bin}:${process.env['PATH']}` });
  const env: NodeJS.ProcessEnv = {};
  for (const entry of result.stdout.split('\0')) {
    const equals = entry.indexOf('=');
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return env;
}

/** Documented addresses → the real ones of the servers started so far. */
function mapAddresses(text: string): string {
  return text.replace(/\b(localhost|127\.0\.0\.1):(\d+)\b/g, (whole, host: string, port: string) => {
    const server = servers.get(Number(port));
    return server === undefined ? whole : `${host}:${server.port}`;
  });
}

async function runBlock(block: Block): Promise<void> {
  const script = `[ -f .session.env ] && source .session.env\n${mapAddresses(block.body)}\n${SAVE_SESSION}`;
  const result = await runShell(script, dir, 120_000, { ...process.env, PATH: `${bin}:${process.env['PATH']}` });
  lastOutput = `${result.stdout}\n${result.stderr}`;
  const where = `docs/revocation.md:${block.line}`;
  expect(result.code, `${where} exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
  const envelopes = jsonValues(result.stdout).filter((value): value is { success: boolean; errors: Array<{ code: number }> } => typeof value === 'object' && value !== null && 'success' in value);
  const words = block.directives.flat();
  const expected = words.includes('expect') ? words.slice(words.indexOf('expect') + 1).map(Number) : undefined;
  if (expected === undefined) {
    for (const envelope of envelopes) expect(envelope.success, `${where} printed a failed envelope: ${JSON.stringify(envelope)}`).toBe(true);
  } else {
    expect(envelopes.map((envelope) => (envelope.success ? 0 : envelope.errors[0]?.code)), `${where} envelopes`).toEqual(expected);
  }
}

async function startServer(block: Block): Promise<void> {
  const words = block.body.replace(/\\\n/g, ' ').trim().split(/\s+/);
  expect(words[0]).toBe('certsmith');
  const command = words[1]!;
  expect(['serve', 'ocspserve']).toContain(command);
  const args = words.slice(2);
  const portAt = args.findIndex((word) => /^--?port$/.test(word));
  const documented = portAt >= 0 ? Number(args[portAt + 1]) : 8888;
  await servers.get(documented)?.process.child.kill('SIGTERM');
  await servers.get(documented)?.process.waitForExit(10_000);
  const port = await findFreePort();
  if (portAt >= 0) args.splice(portAt, 2);
  args.push('-port', String(port));
  if (command === 'serve') args.push('-data-dir', join(dir, '.data'), '-workers', '1', '-loglevel', 'warn');
  const env = await sessionEnv();
  const started = spawnCertsmith([command, ...args], env, dir);
  servers.set(documented, { process: started, port });
  await started.waitForLine((line) => /listening on http/.test(line), 60_000);
}

beforeAll(async () => {
  for (const tool of ['curl', 'jq', 'openssl', 'bc', 'softhsm2-util']) {
    const found = await runShell(`command -v ${tool}`, process.cwd());
    if (found.code !== 0) throw new Error(`docs/revocation.md examples need ${tool} on PATH`);
  }
  dir = await mkdtemp(join(tmpdir(), 'certsmith-docs-revocation-'));
  bin = join(dir, '.bin');
  await runShell(`mkdir -p ${JSON.stringify(bin)}`, dir);
  await writeFile(join(bin, 'certsmith'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_PATH)} "$@"\n`);
  await chmod(join(bin, 'certsmith'), 0o755);
}, 30_000);

afterAll(async () => {
  await killAllCertsmith();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('docs/revocation.md', () => {
  it('marks every fenced block', () => {
    expect(unmarkedFences(PAGE)).toEqual([]);
  });

  it('runs every example in page order', async () => {
    for (const block of blocks) {
      switch (kind(block)) {
        case 'run':
          await runBlock(block);
          break;
        case 'serve':
          await startServer(block);
          break;
        case 'file':
          await writeFile(join(dir, block.directives[0]![1]!), `${block.body}\n`);
          break;
        case 'output': {
          const printed = new Set(lastOutput.split('\n').map((line) => line.trim()));
          for (const line of block.body.split('\n').map((text) => text.trim()).filter(Boolean)) {
            expect(printed.has(line), `docs/revocation.md:${block.line}: "${line}" was not printed; got:\n${lastOutput}`).toBe(true);
          }
          break;
        }
        default:
          throw new Error(`docs/revocation.md:${block.line}: unknown example marker ${block.directives[0]!.join(' ')}`);
      }
    }
  }, 600_000);
});
