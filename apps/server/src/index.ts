export { startServer } from './start-server.js';
export type { RunningServer, StartServerOptions } from './start-server.js';
export {
  resolveServerOptions,
  DEFAULT_ADDRESS,
  DEFAULT_PORT,
} from './server-options.js';
export { defaultDataDir } from './data-dir.js';
export type { ServerOptions, ServerOptionsInput } from './server-options.js';
export { buildOperations, issueBundlerConfig } from './operations.js';
export type { ServerServices } from './operations.js';
export {
  ServerOptionError,
  ConfigFileError,
  SignerLoadError,
  FILE_FLAG_CODES,
  EXIT_USAGE,
  EXIT_CONFIGURATION,
  startupExitCode,
} from './errors.js';
export { loadServerConfig } from './config-file.js';
export type { ServerConfig, SignerConfig, LoadServerConfigOptions } from './config-file.js';
export { loadSigner, toSignerLogger, MULTIROOT_PLUGIN_NAME } from './signer-loader.js';
export type { LoadedSigner, LoadSignerOptions } from './signer-loader.js';
export { resolvePluginModule, resolvePackageFrom, isPathSpecifier, splitPackageSpecifier, PluginNotFoundError, CERTSMITH_DIR } from './plugin-resolution.js';
export type { ResolvedPlugin } from './plugin-resolution.js';
export { loadSignerRegistry } from './signer-registry.js';
export type { SignerRegistry, RegisteredSigner, LoadSignerRegistryOptions } from './signer-registry.js';
export { loadDevelopmentSigner } from './dev-ca.js';
export { createProgram, parseLogLevel, VERSION } from './cli-program.js';
export { acceptGoFlags, acceptGoFlagsEverywhere, normalizeGoFlags } from './go-flags.js';
export type { NormalizeGoFlagsOptions } from './go-flags.js';
export type { CliHandlers } from './cli-program.js';
export { checkTrustFiles, TrustFileError } from './trust-check.js';
export type { TrustFiles, TrustSummary } from './trust-check.js';
