/**
 * openssl as the independent verifier of what the plugin produces: `x509 -text`, `verify`,
 * `req -verify`. Tests write PEMs into a scratch directory and read openssl's text.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Run openssl; returns stdout+stderr (openssl prints some results on stderr). Throws on a non-zero exit. */
export function openssl(args: string[], input?: string): string {
  return execFileSync('openssl', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** `openssl x509 -noout -text` of a certificate PEM. */
export function certificateText(pem: string): string {
  return openssl(['x509', '-noout', '-text'], pem);
}

/**
 * `openssl verify -CAfile ca leaf`: true when openssl prints `OK`. Self-signed CAs are checked by
 * passing the CA as both files.
 */
export function opensslVerifies(dir: string, caPem: string, leafPem: string, name = 'cert'): boolean {
  const caFile = join(dir, `${name}-ca.pem`);
  const leafFile = join(dir, `${name}-leaf.pem`);
  writeFileSync(caFile, caPem);
  writeFileSync(leafFile, leafPem);
  try {
    return openssl(['verify', '-CAfile', caFile, leafFile]).trim().endsWith(': OK');
  } catch {
    return false;
  }
}

/** `openssl req -verify -noout -text` of a CSR PEM: throws when the self-signature does not verify. */
export function csrText(pem: string): string {
  return execFileSync('openssl', ['req', '-verify', '-noout', '-text'], { input: pem, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}
