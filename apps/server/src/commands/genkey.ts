/**
 * `certsmith genkey`, as `cfssl genkey`: a new key and CSR from a CFSSL CSR JSON,
 * `{"csr","key"}`; with `-initca` a self-signed CA, `{"cert","csr","key"}`.
 */
import type { Command } from 'commander';
import { ErrorCode } from '@certsmith/x509-core';
import type { CommandIo, Verbosity } from './common.js';
import { acceptGoFlags, createReporter, goJson, parseJsonInput, readInput, resolveIo, runAction, withLogLevel } from './common.js';
import { generateKeyAndRequest, initCa } from './key-and-csr.js';

interface GenkeyFlags {
  initca?: boolean;
  config?: string;
  loglevel?: Verbosity;
}

const EXAMPLES = `
Output: {"csr": PEM, "key": PEM}, with -initca {"cert": PEM, "csr": PEM, "key": PEM} (cfssl genkey's JSON).

Examples:
  certsmith genkey csr.json | certsmith split -bare server
  certsmith genkey -initca ca-csr.json | certsmith split -bare ca
  echo '{"CN":"db","hosts":["db.internal"],"key":{"algo":"rsa","size":4096}}' | certsmith genkey -

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith genkey`. */
export function registerGenkeyCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program
    .command('genkey')
    .description('generate a new key and CSR from a CFSSL CSR JSON (cfssl genkey)')
    .helpOption('-h, --help', 'show help')
    .argument('<csrjson>', 'CFSSL CSR JSON file, - for stdin')
    .option('--initca', 'make a self-signed CA certificate as well')
    .option('--config <file>', 'accepted for CFSSL compatibility; not used')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  withLogLevel(command);
  acceptGoFlags(command);
  command.action(
    runAction(command, resolved, async (csrFile: string, flags: GenkeyFlags) => {
      const reporter = createReporter(resolved, 'genkey', flags.loglevel);
      const body = parseJsonInput(await readInput(csrFile, resolved, 'CSRJSON', ErrorCode.CsrReadFailed), 'CSRJSON');
      if (flags.initca) {
        resolved.stdout(`${goJson(await initCa(body, { reporter }))}\n`);
        return;
      }
      const generated = await generateKeyAndRequest(body, reporter);
      resolved.stdout(`${goJson({ csr: generated.csr, key: generated.key })}\n`);
    }),
  );
  return command;
}
