/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a temporary directory and `pg_ctl start`
 * on a free loopback port with its socket in that directory (Debian's postgresql package; as root
 * the server runs as the `postgres` user, which PostgreSQL requires). Trust authentication on
 * 127.0.0.1 only; fsync off (nothing here must survive a power cut). Stopped and removed by
 * `stop()`, and at process exit if a test forgot.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A running cluster. */
export interface PostgresCluster {
  readonly port: number;
  /** Everything the server logged, for failure messages. */
  log(): string;
  /** Create a database and return its CFSSL data source (`postgres://postgres@127.0.0.1:PORT/NAME?sslmode=disable`). */
  createDatabase(name: string): Promise<string>;
  /** Stop the server (`pg_ctl stop -m fast`), keeping the data. */
  stopServer(): void;
  /** Start it again on the same port. */
  startServer(): void;
  /**
   * `stopServer` without blocking the event loop: a load generator in the same process keeps
   * sending while PostgreSQL shuts down (in-flight queries are cut, new connections refused).
   */
  stopServerAsync(): Promise<void>;
  /** `startServer` without blocking the event loop (requests meet "the database system is starting up"). */
  startServerAsync(): Promise<void>;
  /** Stop it and remove its files. */
  stop(): void;
}

/** Directory of initdb/pg_ctl: the newest `/usr/lib/postgresql/<version>/bin`, else PATH. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return which.status === 0 ? join(which.stdout.trim(), '..') : null;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const running = new Set<() => void>();
process.once('exit', () => {
  for (const stop of running) stop();
});

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error('PostgreSQL server binaries not found: install Debian package "postgresql" (tools/ensure-system-deps.sh)');
  const base = mkdtempSync(join(tmpdir(), 'certsmith-pg-'));
  const dataDir = join(base, 'data');
  const logFile = join(base, 'server.log');
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
  const runAsync = (command: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    return new Promise<void>((resolve, reject) =>
      execFile(file, argv, { encoding: 'utf8', timeout: 90_000 }, (error, _stdout, stderr) => (error ? reject(new Error(`${command} ${args.join(' ')}: ${error.message}${stderr}`)) : resolve())),
    );
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(base, uid, gid);
  }
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const serverOptions = `-p ${port} -k ${base} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const startArgs = ['-D', dataDir, '-l', logFile, '-o', serverOptions, '-w', '-t', '60', 'start'];
  const stopArgs = ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop'];
  let up = false;
  const startServer = () => {
    run('pg_ctl', startArgs);
    up = true;
  };
  const stopServer = () => {
    if (!up) return;
    up = false;
    run('pg_ctl', stopArgs);
  };
  const stopServerAsync = async () => {
    if (!up) return;
    up = false;
    await runAsync('pg_ctl', stopArgs);
  };
  const startServerAsync = async () => {
    await runAsync('pg_ctl', startArgs);
    up = true;
  };
  const stop = () => {
    running.delete(stop);
    try {
      stopServer();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  };
  running.add(stop);
  try {
    startServer();
  } catch (error) {
    stop();
    throw error;
  }
  return {
    port,
    log: () => (existsSync(logFile) ? execFileSync('cat', [logFile], { encoding: 'utf8' }) : ''),
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database names here are lower-case identifiers, got ${name}`);
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}?sslmode=disable`;
    },
    stopServer,
    startServer,
    stopServerAsync,
    startServerAsync,
    stop,
  };
}
