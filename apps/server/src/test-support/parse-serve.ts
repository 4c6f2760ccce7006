/**
 * Test helper: run `certsmith serve <args>` through the real CLI program (CFSSL flag spelling
 * included) and return what `serve` would receive, without starting anything. Usage errors reject
 * with commander's error (`code` such as `commander.invalidArgument`); help and errors print nothing.
 */
import { createProgram } from '../cli-program.js';
import type { ServerOptionsInput } from '../server-options.js';

export async function parseServe(args: readonly string[]): Promise<ServerOptionsInput> {
  let parsed: ServerOptionsInput | undefined;
  const program = createProgram({
    serve: async (options) => {
      parsed = options;
    },
  });
  const silent = { writeErr: () => {}, writeOut: () => {} };
  program.exitOverride().configureOutput(silent);
  for (const command of program.commands) command.exitOverride().configureOutput(silent);
  await program.parseAsync(['serve', ...args], { from: 'user' });
  if (parsed === undefined) throw new Error('serve was not called');
  return parsed;
}
