/** The revocation commands, registered together: `ocspsign`, `gencrl`, `ocspserve`. */
import type { Command } from 'commander';
import { registerGencrlCommand } from './gencrl.js';
import { registerOcspserveCommand } from './ocspserve.js';
import { registerOcspsignCommand } from './ocspsign.js';

/** Register every revocation command on `program`. */
export function registerRevocationCommands(program: Command): void {
  registerOcspsignCommand(program);
  registerGencrlCommand(program);
  registerOcspserveCommand(program);
}
