/**
 * The command line of a benchmark script, read with `node:util` `parseArgs` and checked before any
 * work starts: a benchmark that misreads `--rounds` or silently ignores a misspelt option runs for
 * minutes and then reports numbers of a run nobody asked for.
 *
 *   const options = readBenchOptions(import.meta.url, {
 *     rounds: { type: 'integer', default: 3, min: 1 },
 *     layouts: { type: 'list', default: 'shared,pinned', choices: ['shared', 'pinned'] },
 *     base: { type: 'string', value: 'DIR', required: true },
 *     'get-post': { type: 'boolean' },
 *   });
 *
 * Option kinds and what comes back for them:
 * - `integer`: a whole number within `min` (default 0) .. `max` (default none);
 * - `string`: the text as given (`value` names it in the usage line; `check(text)` may return a
 *   problem to report, e.g. a directory that does not exist);
 * - `list`: comma-separated text split into an array, every item one of `choices` when given;
 * - `boolean`: a flag, `false` unless given.
 * Options without a default and not given are `undefined`; `required` ones must be given.
 *
 * `--help` prints the usage line (made from the options, defaults shown, as the scripts' own
 * comments write it) and exits 0. Anything wrong — an unknown option, a missing or out-of-range
 * value, a positional argument — prints `<script>: <what is wrong>` and the usage line on stderr
 * and exits 2, never a stack trace.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * @typedef {object} BenchOption
 * @property {'integer' | 'string' | 'list' | 'boolean'} type
 * @property {number | string} [default]   a number for `integer`, comma-separated text for `list`
 * @property {number} [min]                `integer` only (default 0)
 * @property {number} [max]                `integer` only
 * @property {readonly string[]} [choices] `list` only: the items allowed
 * @property {string} [value]              the value's name in the usage line when there is no default (`DIR`, `FILE`)
 * @property {boolean} [required]
 * @property {(text: string) => string | undefined} [check] `string` only: a problem with the value, or undefined
 */

/**
 * Reads `argv` (default: this process's arguments) against `options`; on `--help` or a bad command
 * line it prints and exits the process instead of returning.
 *
 * @param {string} scriptUrl  the script's `import.meta.url`, for the usage line
 * @param {Record<string, BenchOption>} options
 * @param {{ nodeFlags?: string, argv?: string[] }} [how]  `nodeFlags`: the node flags the script
 *   wants, shown in the usage line (e.g. `--expose-gc`)
 * @returns {Record<string, number | string | string[] | boolean | undefined>}
 */
export function readBenchOptions(scriptUrl, options, { nodeFlags, argv = process.argv.slice(2) } = {}) {
  const script = relative(REPO_ROOT, fileURLToPath(scriptUrl));
  const usage = `usage: node ${nodeFlags ? `${nodeFlags} ` : ''}${script} ${Object.entries(options).map(([name, option]) => usageItem(name, option)).join(' ')}`;
  const fail = (problem) => {
    process.stderr.write(`${script}: ${problem}\n${usage}\n`);
    process.exit(2);
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      // Every value is read as text and converted below, so a bad number is reported with its option.
      options: { ...Object.fromEntries(Object.entries(options).map(([name, option]) => [name, { type: option.type === 'boolean' ? 'boolean' : 'string' }])), help: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // parseArgs's own messages name the option (`Unknown option '--round'`); anything else is a bug here.
    if (!String(error?.code).startsWith('ERR_PARSE_ARGS_')) throw error;
    fail(error.message.replaceAll('\n', ' '));
  }
  if (parsed.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const values = {};
  for (const [name, option] of Object.entries(options)) {
    const given = parsed[name];
    if (option.type === 'boolean') {
      values[name] = given ?? false;
      continue;
    }
    if (given === undefined && option.required) fail(`--${name} is required`);
    const text = given ?? (option.default === undefined ? undefined : String(option.default));
    const problem = text === undefined ? undefined : checkValue(name, option, text);
    if (problem !== undefined) fail(problem);
    values[name] = text === undefined ? undefined : convertValue(option, text);
  }
  return values;
}

/** `[--rounds 3]`, `--base DIR`, `[--get-post]`. */
function usageItem(name, option) {
  const shown = option.type === 'boolean' ? `--${name}` : `--${name} ${option.default ?? option.value ?? (option.type === 'integer' ? 'N' : 'VALUE')}`;
  return option.required ? shown : `[${shown}]`;
}

/** What is wrong with `text` as the value of `--name`, or undefined. */
function checkValue(name, option, text) {
  if (option.type === 'integer') {
    const number = text.trim() === '' ? Number.NaN : Number(text);
    // No count, size or duration of a benchmark is negative, so `min` defaults to 0.
    const min = option.min ?? 0;
    const range = option.max === undefined ? `≥ ${min}` : `${min}–${option.max}`;
    if (!Number.isSafeInteger(number)) return `--${name} must be a whole number ${range}, got '${text}'`;
    if (number < min || (option.max !== undefined && number > option.max)) return `--${name} must be ${range}, got ${number}`;
    return undefined;
  }
  if (option.type === 'list') {
    const items = text.split(',');
    const wrong = items.filter((item) => item === '' || (option.choices !== undefined && !option.choices.includes(item)));
    if (wrong.length > 0) return `--${name} takes a comma-separated list${option.choices ? ` of ${option.choices.join(', ')}` : ''}, got '${text}'`;
    return undefined;
  }
  if (text === '') return `--${name} must not be empty`;
  return option.check?.(text);
}

function convertValue(option, text) {
  if (option.type === 'integer') return Number(text);
  if (option.type === 'list') return text.split(',');
  return text;
}
