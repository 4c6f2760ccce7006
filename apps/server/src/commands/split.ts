/**
 * `certsmith split`, cfssljson's behaviour (1.2.0, the Debian `cfssljson`): read CFSSL JSON and
 * write its members to files named after NAME (default `cert`):
 *
 * | member (first found) | file | mode |
 * |---|---|---|
 * | `cert` / `certificate` | `NAME.pem` | 0664 (less umask) |
 * | `key` / `private_key` | `NAME-key.pem` | 0600 |
 * | `encrypted_key` | `NAME-key.enc` | 0600 |
 * | `csr` / `certificate_request` | `NAME.csr` | 0644 |
 * | `bundle` (a string: `bundle` output) | `NAME-bundle.pem` | 0644 |
 * | `bundle` (an object: newcert with `"bundle": true`) | `NAME-bundle.pem` (bundle + root), `NAME-root.pem` | 0644 |
 * | `ocspResponse` (base64) | `NAME-response.der` | 0644 |
 *
 * Empty `cert`/`key`/`csr` values write nothing. `-bare`: the input is a command's output
 * (`gencert`, `sign`, `bundle`…); certsmith also unwraps a full API envelope there (cfssljson
 * would write nothing). Without `-bare` the input must be an API envelope (`{"success", "result",
 * "errors"}`): `success: false` (or no envelope) fails with the envelope's errors. `-stdout` prints
 * the contents (binary ones base64) instead of writing files. Unlike cfssljson, a key file that
 * already exists is narrowed to 0600 before it is written, and non-string members are an error
 * instead of a crash.
 */
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CertsmithError } from '@certsmith/x509-core';
import type { CommandIo } from './common.js';
import { acceptGoFlags, readInput, resolveIo, runAction } from './common.js';

interface SplitFlags {
  bare?: boolean;
  file?: string;
  stdout?: boolean;
}

/** One file to write. */
export interface SplitOutput {
  filename: string;
  contents: Buffer;
  /** Printed base64 with `-stdout`. */
  binary: boolean;
  mode: number;
  /** Secret material: the file is made 0600 even when it already existed. */
  secret: boolean;
}

const INPUT_ERROR = 400;
const MEMBERS = ['cert', 'certificate', 'key', 'private_key', 'encrypted_key', 'csr', 'certificate_request', 'bundle', 'ocspResponse'];

const EXAMPLES = `
Examples:
  certsmith gencert -ca ca.pem -ca-key ca-key.pem csr.json | certsmith split -bare www
      → www.pem, www-key.pem (0600), www.csr
  certsmith bundle -cert www.pem | certsmith split -bare www             → www-bundle.pem
  curl -s -d @req.json http://127.0.0.1:8888/api/v1/cfssl/newcert | certsmith split www
  certsmith split -bare -f gencert.json -stdout

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function goKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

function stringMember(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  if (typeof value !== 'string') throw new CertsmithError(INPUT_ERROR, `member ${JSON.stringify(name)} must be a string, got ${goKind(value)}`);
  return value;
}

/** The first present member of `names` (cfssljson's `if … else if`), or `''`. */
function firstMember(input: Record<string, unknown>, names: readonly string[]): string {
  for (const name of names) if (name in input) return stringMember(input, name);
  return '';
}

/** An API envelope's `result`, or a coded error for a failed (or absent) response. */
function unwrapEnvelope(input: Record<string, unknown>): Record<string, unknown> {
  if (input['success'] !== true) {
    const errors = Array.isArray(input['errors']) ? input['errors'].filter(isRecord) : [];
    const messages = errors.map((error) => String(error['message'] ?? ''));
    const code = typeof errors[0]?.['code'] === 'number' ? (errors[0]['code'] as number) : 0;
    const detail = 'success' in input ? messages.join('; ') : 'the input is not a CFSSL API response (use -bare for command output)';
    throw new CertsmithError(code, `Request failed: ${detail}`);
  }
  return isRecord(input['result']) ? input['result'] : {};
}

/**
 * The files cfssljson would write for `parsed` (see the module comment). Throws coded errors (400
 * for malformed input; a failed envelope keeps its first error's code).
 */
export function splitOutputs(parsed: unknown, baseName: string, bare: boolean): SplitOutput[] {
  if (!isRecord(parsed)) throw new CertsmithError(INPUT_ERROR, `Failed to parse input: json: cannot unmarshal ${goKind(parsed)} into Go value of type map[string]interface {}`);
  let input = parsed;
  const looksLikeEnvelope = 'success' in parsed && 'result' in parsed && !MEMBERS.some((name) => name in parsed);
  if (!bare || looksLikeEnvelope) input = unwrapEnvelope(parsed);

  const outputs: SplitOutput[] = [];
  const text = (filename: string, contents: string, mode: number, secret = false): void => {
    outputs.push({ filename, contents: Buffer.from(contents, 'utf8'), binary: false, mode, secret });
  };
  const cert = firstMember(input, ['cert', 'certificate']);
  if (cert !== '') text(`${baseName}.pem`, cert, 0o664);
  const key = firstMember(input, ['key', 'private_key']);
  if (key !== '') text(`${baseName}-key.pem`, key, 0o600, true);
  if ('encrypted_key' in input) {
    outputs.push({ filename: `${baseName}-key.enc`, contents: Buffer.from(stringMember(input, 'encrypted_key'), 'utf8'), binary: true, mode: 0o600, secret: true });
  }
  const csr = firstMember(input, ['csr', 'certificate_request']);
  if (csr !== '') text(`${baseName}.csr`, csr, 0o644);
  const bundle = input['bundle'];
  if (isRecord(bundle)) {
    // newcert/sign with "bundle": true: the bundle object of the issued certificate (newer cfssljson).
    const chain = stringMember(bundle, 'bundle');
    const root = stringMember(bundle, 'root');
    text(`${baseName}-bundle.pem`, `${chain}\n${root}`, 0o644);
    text(`${baseName}-root.pem`, root, 0o644);
  } else if ('bundle' in input) {
    text(`${baseName}-bundle.pem`, stringMember(input, 'bundle'), 0o644);
  }
  if ('ocspResponse' in input) {
    const encoded = stringMember(input, 'ocspResponse');
    // Go's base64.StdEncoding is strict: padded, no whitespace.
    if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
      throw new CertsmithError(INPUT_ERROR, 'Failed to parse ocspResponse: illegal base64 data');
    }
    outputs.push({ filename: `${baseName}-response.der`, contents: Buffer.from(encoded, 'base64'), binary: true, mode: 0o644, secret: false });
  }
  return outputs;
}

async function writeOutput(output: SplitOutput, cwd: string): Promise<void> {
  const handle = await open(resolve(cwd, output.filename), 'w', output.mode);
  try {
    // A pre-existing key file keeps its old mode under open(2); narrow it before any byte is written.
    if (output.secret) await handle.chmod(0o600);
    await handle.writeFile(output.contents);
  } finally {
    await handle.close();
  }
}

/** Register `certsmith split`. */
export function registerSplitCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('split')
    .description('split cfssl/certsmith JSON into PEM files, as cfssljson')
    .helpOption('-h, --help', 'show help')
    .argument('[name]', 'base name of the files', 'cert')
    .option('--bare', 'the input is command output (gencert, sign, bundle…), not an API response envelope')
    .option('-f, --file <file>', 'JSON input, - for stdin', '-')
    .option('--stdout', 'print the contents instead of writing files')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  acceptGoFlags(command);
  command.action(
    runAction(command, resolved, async (name: string, flags: SplitFlags) => {
      const data = await readInput(flags.file ?? '-', resolved, '-f', 0);
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString('utf8'));
      } catch (cause) {
        throw new CertsmithError(INPUT_ERROR, `Failed to parse input: ${(cause as Error).message}`, { cause });
      }
      const outputs = splitOutputs(parsed, name, flags.bare === true);
      for (const output of outputs) {
        if (flags.stdout) resolved.stdout(`${output.binary ? output.contents.toString('base64') : output.contents.toString('utf8')}\n`);
        else await writeOutput(output, resolved.cwd());
      }
    }),
  );
  return command;
}
