import { multirootSignerPlugin } from './plugin.js';

export { multirootSignerPlugin, loadMultirootSigner, resolveAuthKey, PLUGIN_NAME } from './plugin.js';
export { createMultirootSigner, SIGN_PATH, AUTHSIGN_PATH, INFO_PATH } from './multiroot-signer.js';
export type { MultirootSigner, MultirootSignerDependencies } from './multiroot-signer.js';
export {
  validateMultirootOptions,
  multirootOptionsSchema,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_BACKOFF_INITIAL_MS,
  DEFAULT_BACKOFF_MAX_MS,
  DEFAULT_CONNECTIONS,
} from './options.js';
export type { MultirootSignerOptions, MultirootSignerSettings } from './options.js';
export { parseRemoteAddress, parseRemoteList, DEFAULT_REMOTE_PORT } from './remote-address.js';
export type { RemoteAddress } from './remote-address.js';
export { mapRemoteCode } from './remote-answer.js';
export type { RemoteState, BackoffPolicy } from './backoff.js';
export type { RemoteTlsOptions } from './remote-group.js';
export { RemoteSignerError, RemoteUnreachableError, RemoteTransportError } from './errors.js';
export type { RemoteFailure } from './errors.js';

/** The plugin definition: `["@certsmith/signer-multiroot", { "remotes": [...], "authKey": "env:CA_AUTH_KEY" }]`. */
export default multirootSignerPlugin;
