/**
 * `--loglevel` values: CFSSL's numeric levels or pino's names. Its own module, without commander,
 * because the primary process of `serve --processes` reads it too and loads nothing it can avoid.
 */
import type { LogLevel } from '@certsmith/http-api';

/** pino's level names, as `--loglevel` accepts them. */
export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** CFSSL's numeric `-loglevel` (0 debug, 1 info, 2 warning, 3 error, 4 critical, 5 fatal) in pino's names. */
const CFSSL_LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'fatal', 'fatal'];

/** The level `value` names (CFSSL's 0–5 or a pino level name, any case), or `null`. */
export function logLevelOf(value: string): LogLevel | null {
  if (/^[0-5]$/.test(value)) return CFSSL_LOG_LEVELS[Number(value)]!;
  const name = value.toLowerCase() as LogLevel;
  return LOG_LEVELS.includes(name) ? name : null;
}
