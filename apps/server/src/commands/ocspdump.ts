/**
 * `certsmith ocspdump`, as `cfssl ocspdump -db-config F` (lifecycle spec §5.3): every unexpired OCSP
 * response of the store as one standard base64 line — the input of `ocspserve -responses` (certsmith's
 * or CFSSL's). Nothing else is printed; no output means no responses.
 */
import type { Command } from 'commander';
import { iterateOcspResponses } from '@certsmith/cert-store';
import type { CommandIo, Verbosity } from './common.js';
import { resolveIo, runAction, withLogLevel } from './common.js';
import { locateStore, openCommandStore, withStoreLocation } from './store-access.js';
import type { StoreLocationFlags } from './store-access.js';

interface OcspdumpFlags extends StoreLocationFlags {
  loglevel?: Verbosity;
}

const EXAMPLES = `
Examples:
  certsmith ocspdump -db-config db.json > responses.txt
  certsmith ocspserve -responses responses.txt
  cfssl ocspserve -responses responses.txt

Exit codes: 0 success, 1 usage error, 2 failure ({"code":N,"message":"…"} on stderr).`;

/** Register `certsmith ocspdump`. */
export function registerOcspdumpCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const command = program.command('ocspdump').description('print the unexpired OCSP responses of the store, one base64 line each (cfssl ocspdump)').helpOption('-h, --help', 'show help');
  withStoreLocation(command).allowExcessArguments(false).addHelpText('after', EXAMPLES);
  withLogLevel(command);
  command.action(
    runAction(command, resolved, async (flags: OcspdumpFlags) => {
      // Read only: the schema is used as found (CFSSL's ocsp_responses table is enough).
      const store = await openCommandStore(await locateStore(flags, resolved), { migrations: 'off' });
      try {
        let lines = '';
        for await (const response of iterateOcspResponses(store, { expiresAfter: new Date() })) {
          lines += `${Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength).toString('base64')}\n`;
          if (lines.length > 1 << 20) {
            resolved.stdout(lines);
            lines = '';
          }
        }
        if (lines !== '') resolved.stdout(lines);
      } finally {
        await store.close();
      }
    }),
  );
  return command;
}
