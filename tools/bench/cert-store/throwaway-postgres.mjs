/**
 * A throwaway PostgreSQL cluster for the store benchmarks (the same recipe as the tests' helper in
 * packages/cert-store/src/test-support/postgres-cluster.ts, which is TypeScript and not built):
 * initdb into a temporary directory, pg_ctl start on a free loopback port, as `postgres` when root.
 * Unlike the tests' cluster, fsync stays on: commit latency is part of what is measured.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function binDir() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => b - a) : [];
  if (versions.length === 0) throw new Error('PostgreSQL server binaries not found (Debian package postgresql)');
  return join(root, versions[0], 'bin');
}

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * Clusters started and not stopped yet: stopped when the process exits however it exits (a benchmark
 * ended by SIGTERM or a thrown error must not leave a PostgreSQL server behind).
 */
const running = new Set();
process.once('exit', () => {
  for (const stop of [...running]) {
    try {
      stop();
    } catch {
      // Exiting anyway; the next stop is still tried.
    }
  }
});

/** Start a cluster; returns `{ createDatabase(db), serverPid(), stop() }`. */
export async function startThrowawayPostgres() {
  const bin = binDir();
  const base = mkdtempSync(join(tmpdir(), 'certsmith-bench-pg-'));
  const asRoot = process.getuid() === 0;
  const run = (command, args) =>
    execFileSync(asRoot ? 'runuser' : join(bin, command), asRoot ? ['-u', 'postgres', '--', join(bin, command), ...args] : args, { stdio: 'pipe' });
  if (asRoot) {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(base, id('-u'), id('-g'));
  }
  run('initdb', ['-D', join(base, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  run('pg_ctl', ['-D', join(base, 'data'), '-l', join(base, 'log'), '-o', `-p ${port} -k ${base} -c listen_addresses=127.0.0.1`, '-w', 'start']);
  const stop = () => {
    running.delete(stop);
    try {
      run('pg_ctl', ['-D', join(base, 'data'), '-m', 'fast', '-w', 'stop']);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  };
  running.add(stop);
  return {
    createDatabase(name) {
      run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', `CREATE DATABASE ${name}`]);
      return `postgres://postgres@127.0.0.1:${port}/${name}?sslmode=disable`;
    },
    /** The postmaster's pid: its process tree (servers.mjs `processTree`) is every backend, for CPU readings. */
    serverPid() {
      return Number(readFileSync(join(base, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    },
    stop,
  };
}
