/**
 * CFSSL's command line is Go's `flag` package: long flags with one dash (`-ca-key file`,
 * `-port=0`), booleans as `-initca` or `-initca=true`. certsmith's commands are commander
 * commands with `--long` flags; this one shim lets every command take both spellings. It is applied
 * once to the whole program ({@link acceptGoFlagsEverywhere}), so no command can be left out.
 */
import type { Command, Option } from 'commander';

const TRUE_VALUES = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE_VALUES = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** Options of {@link normalizeGoFlags}. */
export interface NormalizeGoFlagsOptions {
  /**
   * Stop at the first operand: for a command with subcommands, whose operand is the subcommand's
   * name and everything after it belongs to the subcommand (which rewrites its own flags).
   */
  stopAtOperand?: boolean;
}

/**
 * Rewrite Go `flag`-style arguments for `options`: `-name` and `-name=value` become `--name` and
 * `--name value` for these long flags, a boolean's `-name=true|false` (Go's `strconv.ParseBool`
 * spellings) becomes `--name` or nothing, and a short flag's `-f=value` becomes `-f value`. A value
 * following a flag is never rewritten, nor anything after `--`; unknown names are left for commander
 * to reject (so a mistyped `-bogus` stays an error).
 */
export function normalizeGoFlags(argv: readonly string[], options: readonly Option[], settings: NormalizeGoFlagsOptions = {}): string[] {
  const longs = new Map<string, Option>();
  const shorts = new Map<string, Option>();
  for (const option of options) {
    if (option.long) longs.set(option.long.replace(/^--/, ''), option);
    if (option.short) shorts.set(option.short.replace(/^-/, ''), option);
  }
  const takesValue = (option: Option): boolean => option.required || option.optional;
  const out: string[] = [];
  let expectValue = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (expectValue) {
      out.push(arg);
      expectValue = false;
      continue;
    }
    if (arg === '--' || (settings.stopAtOperand && !arg.startsWith('-'))) {
      out.push(...argv.slice(index));
      break;
    }
    const match = /^--?([A-Za-z][\w-]*)(?:=([\s\S]*))?$/.exec(arg);
    const name = match?.[1];
    const option = name === undefined ? undefined : (longs.get(name) ?? (name.length === 1 && !arg.startsWith('--') ? shorts.get(name) : undefined));
    if (match === null || name === undefined || option === undefined) {
      out.push(arg);
      continue;
    }
    const value = match[2];
    const flag = longs.get(name) === option ? `--${name}` : `-${name}`;
    if (takesValue(option)) {
      if (value === undefined) {
        out.push(flag);
        expectValue = option.required;
      } else {
        out.push(flag, value);
      }
    } else if (value === undefined || TRUE_VALUES.has(value)) {
      out.push(flag);
    } else if (!FALSE_VALUES.has(value)) {
      // Not a boolean: leave it for commander to report.
      out.push(arg);
    }
  }
  return out;
}

const wrapped = new WeakSet<Command>();

/** The options `command` parses, its help option included (commander keeps that one apart). */
function parsedOptions(command: Command): Option[] {
  const help = command
    .createHelp()
    .visibleOptions(command)
    .filter((option) => !command.options.includes(option));
  return [...command.options, ...help];
}

/** Let `command` take CFSSL's single-dash flags (see {@link normalizeGoFlags}). Idempotent. */
export function acceptGoFlags(command: Command): Command {
  if (wrapped.has(command)) return command;
  wrapped.add(command);
  const parse = command.parseOptions.bind(command);
  command.parseOptions = (argv: string[]) => parse(normalizeGoFlags(argv, parsedOptions(command), { stopAtOperand: command.commands.length > 0 }));
  return command;
}

/** {@link acceptGoFlags} for `program` and every command below it. */
export function acceptGoFlagsEverywhere(program: Command): Command {
  acceptGoFlags(program);
  for (const command of program.commands) acceptGoFlagsEverywhere(command);
  return program;
}
