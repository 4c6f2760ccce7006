/**
 * The issuer's use case over one signer, as the unit tests of its building blocks call it: the
 * signer is the only entry (`default`, forwarding labels when it is a remote CA), tasks run on this
 * thread, and the caller counts as authenticated (it holds the policy), so these helpers exercise
 * exactly what the server and the CLI run.
 */
import type { SignRequest, Signer } from '@certsmith/signer-api';

import type { NewCertificateRequest } from '../certificate-request.js';
import { createIssuer } from '../issuer.js';
import type { Issuer, NewCertificateOutcome, SignOutcome } from '../issuer.js';
import { DEFAULT_LABEL, createSignerDirectory } from '../signer-directory.js';
import type { SigningPolicy } from '../signing-policy.js';

/** An issuer whose only signer is `signer` under `policy`. */
export function issuerFor(signer: Signer, policy: SigningPolicy): Issuer {
  return createIssuer({ signers: createSignerDirectory([{ label: DEFAULT_LABEL, signer, policy, forwardsLabels: typeof signer.sign !== 'function' }]) });
}

/** newcert with `signer` under `policy`. */
export function issueNewCertificate(input: NewCertificateRequest, signer: Signer, policy: SigningPolicy): Promise<NewCertificateOutcome> {
  return issuerFor(signer, policy).newCertificate(input, { authenticated: true });
}

/** sign with `signer` under `policy`. */
export function signCertificateRequest(request: SignRequest, signer: Signer, policy: SigningPolicy): Promise<SignOutcome> {
  return issuerFor(signer, policy).signCertificate(request, { authenticated: true });
}
