/** The issuing endpoints over HTTP: newcert, newkey, sign, authsign and info, thin over the issuer's use case. */
export { createNewcertOperation, newcertRequestSchema } from './newcert-operation.js';
export { newkeyOperation, newkeyRequestSchema } from './newkey-operation.js';
export { createSignOperation, createAuthsignOperation, signRequestSchema, authsignRequestSchema, authsignRequestLabels } from './sign-operation.js';
export type { NewcertResult, NewkeyResult, SignResultBody } from './issue-result-schemas.js';
export { createInfoOperation, infoRequestSchema } from './info-operation.js';
export { issueCall } from './issue-options.js';
export type { IssueOperationOptions } from './issue-options.js';
