/**
 * Errors of this plugin that the contract package has no class for. certsmith checks errors by
 * their numeric `code` (CFSSL's scheme), never by `instanceof`, so a plugin can define its own
 * classes without depending on certsmith internals.
 */

/** The JWK's public key is not the certificate's: CFSSL 2300 `Private key does not match public key`. */
export class KeyMismatchError extends Error {
  readonly code = 2300;
  override readonly name = 'KeyMismatchError';
}

/** The certificate file cannot be read: CFSSL 1001 `Failed to read certificate`. */
export class CertificateReadError extends Error {
  readonly code = 1001;
  override readonly name = 'CertificateReadError';
}
