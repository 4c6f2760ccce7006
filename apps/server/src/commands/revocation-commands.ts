/** The revocation commands, registered together: `revoke`, `gencrl`, `ocspsign`, `ocsprefresh`, `ocspdump`, `ocspserve`. */
import type { Command } from 'commander';
import { registerGencrlCommand } from './gencrl.js';
import { registerOcspdumpCommand } from './ocspdump.js';
import { registerOcsprefreshCommand } from './ocsprefresh.js';
import { registerRevokeCommand } from './revoke.js';
import { registerOcspserveCommand } from './ocspserve.js';
import { registerOcspsignCommand } from './ocspsign.js';

/** Register every revocation command on `program`. */
export function registerRevocationCommands(program: Command): void {
  registerRevokeCommand(program);
  registerGencrlCommand(program);
  registerOcspsignCommand(program);
  registerOcsprefreshCommand(program);
  registerOcspdumpCommand(program);
  registerOcspserveCommand(program);
}
