/**
 * `certsmith ocspserve`, as `cfssl ocspserve` (lifecycle spec §5.4–§5.5): an RFC 6960 OCSP responder
 * (GET and POST) answering from pre-signed responses — a `-responses` file (the `ocspdump` format:
 * base64 responses separated by whitespace) or the `ocsp_responses` table of a `-db-config` store
 * (`-responses` wins when both are given) — with CFSSL's flags: `-address` (127.0.0.1), `-port`
 * (8888), `-path` (/). Prints `certsmith ocspserve listening on <url>` once it listens; SIGTERM or
 * SIGINT stops it after in-flight requests.
 *
 * `-ca` (certsmith) names the CA certificates answered for: SHA-256/384/512 CertIDs are then found
 * too, and store lookups use the CA's key identifier rather than the request's SHA-1 key hash.
 * `--workers N` answers in N processes on one socket (default: one per CPU, at most 8, as CFSSL's Go
 * runtime uses every core); `--workers 1` answers in this process. The connection limits are
 * `serve`'s: `--headers-timeout`, `--body-timeout`, `--keep-alive-timeout`, `--max-connections`.
 * Behaviour differences from CFSSL (GMT dates, paths other than `/` working, `//` never redirected,
 * URL-safe base64, weak `If-None-Match`) are `@certsmith/revocation`'s responder's.
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadDbConfigFile } from '@certsmith/cert-store';
import { createOcspFileSource } from '@certsmith/revocation';
import type { OcspFileSource } from '@certsmith/revocation';
import { CertsmithError, ErrorCode, parseCertificates } from '@certsmith/x509-core';
import type { OcspResponderPlan } from '../revocation/ocsp-responder-runtime.js';
import { startOcspResponder } from '../revocation/ocsp-responder-runtime.js';
import { startOcspWorkers } from '../revocation/ocsp-worker-cluster.js';
import { integerFlag } from '../revocation/flag-parsers.js';
import type { CommandIo, Verbosity } from './common.js';
import { UsageError, createReporter, readInput, resolveIo, runAction, withLogLevel } from './common.js';

interface OcspserveFlags {
  address: string;
  port: number;
  responses?: string;
  dbConfig?: string;
  path: string;
  ca?: string;
  workers?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
  keepAliveTimeout?: number;
  maxConnections?: number;
  loglevel?: Verbosity;
}

/** Largest timeout flag: one hour (they exist to be short), as `serve`'s. */
const MAX_TIMEOUT_MS = 3_600_000;

/** Worker processes by default: one per CPU, at most 8. */
export function defaultOcspWorkers(): number {
  return Math.min(8, availableParallelism());
}

/** How the command waits for its stop signal; injectable for tests. */
export interface OcspserveLifecycle {
  /** Resolves when the server should stop (default: the first SIGTERM or SIGINT). */
  stopped(): Promise<void>;
}

const EXAMPLES = `
Examples:
  certsmith ocspdump -db-config db.json > responses.txt
  certsmith ocspserve -responses responses.txt -port 8889
  certsmith ocspserve -db-config db.json -ca ca.pem -path /ocsp -address 0.0.0.0 --workers 4
  openssl ocsp -issuer ca.pem -cert www.pem -url http://127.0.0.1:8889 -CAfile ca.pem

Exit codes: 0 stopped by a signal, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

function signalLifecycle(): OcspserveLifecycle {
  return {
    stopped: () =>
      new Promise<void>((done) => {
        const stop = (): void => {
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          done();
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      }),
  };
}

/** Register `certsmith ocspserve`. */
export function registerOcspserveCommand(program: Command, io: Partial<CommandIo> = {}, lifecycle: OcspserveLifecycle = signalLifecycle()): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('ocspserve')
    .description('serve OCSP responses from a responses file or the certificate store (cfssl ocspserve)')
    .helpOption('-h, --help', 'show help')
    .option('--address <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on, 0 for any free port', integerFlag(0, 65_535), 8888)
    .option('--responses <file>', 'responses file: base64 DER OCSP responses separated by whitespace (the ocspdump output)')
    .option('--db-config <file>', 'CFSSL db-config file: answer from the store\'s ocsp_responses')
    .option('--path <path>', 'path the responder is served at (GET requests carry the request after it)', '/')
    .option('--ca <file>', 'CA certificates answered for (PEM, several allowed): enables SHA-2 CertIDs')
    .option('--workers <n>', `processes answering on the one socket; 1 answers in this process (default: one per CPU, at most 8)`, integerFlag(1, 64))
    .option('--headers-timeout <ms>', 'time a client has to send the request line and headers, else 408 and close (default: 10000)', integerFlag(1, MAX_TIMEOUT_MS))
    .option('--body-timeout <ms>', 'time a client has to send the request body once its headers are in, else 408 and close (default: 20000)', integerFlag(1, MAX_TIMEOUT_MS))
    .option('--keep-alive-timeout <ms>', 'idle keep-alive connections are closed after this (default: 65000)', integerFlag(1, MAX_TIMEOUT_MS))
    .option('--max-connections <n>', 'most connections open at once per worker process; more are closed as soon as they are accepted (default: 1024)', integerFlag(1, 1_000_000))
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  command.action(
    runAction(command, resolved, async (flags: OcspserveFlags) => {
      const reporter = createReporter(resolved, 'ocspserve', flags.loglevel);
      if (!flags.path.startsWith('/')) throw new UsageError(`--path must start with "/", got ${JSON.stringify(flags.path)}`);
      let caPem: string | undefined;
      if (flags.ca !== undefined) {
        caPem = (await readInput(flags.ca, resolved, '--ca', ErrorCode.CertificateReadFailed)).toString('utf8');
        let certificates;
        try {
          certificates = parseCertificates(caPem);
        } catch (error) {
          throw new CertsmithError(ErrorCode.CertificateParseFailed, `--ca: ${(error as Error).message}`, { cause: error });
        }
        if (certificates.length === 0) throw new CertsmithError(ErrorCode.CertificateDecodeFailed, '--ca: no PEM certificate in the file');
      }

      const plan: OcspResponderPlan = {
        path: flags.path,
        host: flags.address,
        port: flags.port,
        limits: { headersTimeoutMs: flags.headersTimeout, bodyTimeoutMs: flags.bodyTimeout, keepAliveTimeoutMs: flags.keepAliveTimeout, maxConnections: flags.maxConnections },
        ...(caPem === undefined ? {} : { caPem }),
      };
      let fileSource: OcspFileSource | undefined;
      if (flags.responses !== undefined) {
        let text: string;
        try {
          text = await readFile(resolve(resolved.cwd(), flags.responses), 'utf8');
        } catch (cause) {
          throw new CertsmithError(ErrorCode.BadRequest, `unable to read response file (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`, { cause });
        }
        // Read once here: the warnings and the count once, whatever the number of workers.
        fileSource = createOcspFileSource(text, { onInvalid: (position, error) => reporter.warn(`response ${position} of ${flags.responses} skipped: ${error.message}`) });
        reporter.progress(`${fileSource.size} responses loaded`);
        plan.responsesText = text;
      } else if (flags.dbConfig !== undefined) {
        plan.dbConfig = await loadDbConfigFile(resolve(resolved.cwd(), flags.dbConfig));
      } else {
        throw new UsageError('no response file or db-config provided, please set the one of these using either -responses or -db-config flags');
      }

      const workers = flags.workers ?? defaultOcspWorkers();
      // Worker processes parse their own copy of the file: this process keeps none.
      if (workers !== 1) fileSource = undefined;
      const warn = (message: string): void => reporter.warn(message);
      const server = workers === 1 ? await startOcspResponder(plan, warn, fileSource).then((running) => ({ url: running.server.url, close: () => running.close() })) : await startOcspWorkers(plan, workers, warn);
      resolved.stdout(`certsmith ocspserve listening on ${server.url}${flags.path === '/' ? '' : flags.path}\n`);
      await lifecycle.stopped();
      await server.close();
    }),
  );
  return command;
}
