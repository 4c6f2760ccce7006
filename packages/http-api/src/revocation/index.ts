/** Revocation endpoints: ocspsign, revoke, crl (CFSSL's) and the raw CRL download. */
export { createOcspsignOperation, ocspsignRequestSchema, ocspsignResultSchema, OCSPSIGN_PARSE_MESSAGE } from './ocspsign-operation.js';
export type { OcspsignOperationOptions, OcspsignResult } from './ocspsign-operation.js';
export { createRevokeOperation, revokeRequestSchema, revokeResultSchema, REVOKE_PARSE_MESSAGE } from './revoke-operation.js';
export type { RevokeOperationOptions } from './revoke-operation.js';
export { createCrlOperation, createCrlFileOperation, crlResultSchema, CRL_FILE_PATH } from './crl-operation.js';
export type { CrlOperationOptions } from './crl-operation.js';
export { protectedRequest } from './request-protection.js';
export type { RequestProtection } from './request-protection.js';
