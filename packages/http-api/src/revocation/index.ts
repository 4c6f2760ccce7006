/** Revocation endpoints: ocspsign, revoke, crl (CFSSL's) and the raw CRL download. */
export { createOcspsignOperation, ocspsignRequestSchema, ocspsignResultSchema, OCSPSIGN_PARSE_MESSAGE } from './ocspsign-operation.js';
export type { OcspsignOperationOptions, OcspsignResult } from './ocspsign-operation.js';
