export { startServer } from './start-server.js';
export type { RunningServer, StartServerOptions } from './start-server.js';
export {
  resolveServerOptions,
  defaultDataDir,
  DEFAULT_ADDRESS,
  DEFAULT_PORT,
} from './server-options.js';
export type { ServerOptions, ServerOptionsInput } from './server-options.js';
export { buildOperations } from './operations.js';
export { ServerOptionError, FILE_FLAG_CODES } from './errors.js';
export { createProgram, normalizeCfsslFlags, parseLogLevel, SERVE_FLAGS, VERSION } from './cli-program.js';
export type { CliHandlers } from './cli-program.js';
