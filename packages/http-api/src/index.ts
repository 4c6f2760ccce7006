export { createApp, operationName, API_PREFIXES } from './app.js';
export type { AppOptions, RawRoute, RequestObservation, RequestObserver } from './app.js';
export { defineOperation, collectTasks, compilePathTemplate } from './operation.js';
export type {
  AnyOperation,
  HttpMethod,
  OperationContext,
  OperationDefinition,
  OperationRequest,
  PathTemplate,
  RequestLabels,
} from './operation.js';
export { createHealthOperation } from './health-operation.js';
export type {
  HealthCheckResult,
  HealthContributor,
  HealthOperationOptions,
  HealthResult,
} from './health-operation.js';
export { JsonText, successEnvelope, errorEnvelope, serializeEnvelope } from './envelope.js';
export type { Envelope, ErrorEnvelope, ResponseMessage, SuccessEnvelope } from './envelope.js';
export { mapErrorToResponse, INTERNAL_ERROR_MESSAGE } from './error-mapping.js';
export type { ErrorResponse } from './error-mapping.js';
export {
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  RequestTimeoutError,
  ServiceUnavailableError,
  WorkerCrashedError,
} from './errors.js';
export { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, readRequestBody, parseJsonObject, jsonTypeName } from './request-body.js';
export { closeAfterResponse, LINGER_MS } from './lingering-close.js';
export { validateRequest, formatFieldPath, describeSchema } from './validation.js';
export { defineTask, isTaskDefinition, resolveBuiltModule } from '@certsmith/worker-pool';
export type { TaskDefinition, TaskInput, TaskOutput, TaskSpec } from '@certsmith/worker-pool';
export { createInlineTaskRunner } from '@certsmith/worker-pool';
export type { InlineTaskRunnerOptions, RunTaskOptions, TaskRunner } from '@certsmith/worker-pool';
export { createLogger, REDACT_PATHS } from './logger.js';
export type { CreateLoggerOptions, Logger, LogLevel } from './logger.js';
export { createHttpServer, listen, closeHttpServer, KEEP_ALIVE_TIMEOUT_MS, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS } from './http-server.js';
export type { ApiServer, CloseHttpServerOptions, HttpServerOptions, ListeningAddress } from './http-server.js';
export {
  checkTlsConfig,
  compileClientCnPattern,
  parseMinTlsVersion,
  toHttpsServerOptions,
  TlsConfigError,
  DEFAULT_MIN_TLS_VERSION,
  MIN_TLS_VERSIONS,
} from './tls-options.js';
export type { ApiTlsConfig, ClientCnMatcher, MinTlsVersion, TlsConfigField } from './tls-options.js';
export { clientCommonName, createClientCnGuard, INVALID_CN_MESSAGE } from './client-auth.js';
export type { ClientCnGuard } from './client-auth.js';
export { certinfoOperation, certinfoRequestSchema, createCertinfoOperation, NO_CERTIFICATE_FOUND } from './certinfo-operation.js';
export type { CertinfoOperationOptions } from './certinfo-operation.js';
export { createOpenApiDocument } from './openapi.js';
export type { OpenApiOptions } from './openapi.js';
export {
  createNewcertOperation,
  newkeyOperation,
  createSignOperation,
  createAuthsignOperation,
  createInfoOperation,
  authsignRequestLabels,
  issueCall,
} from './issue/index.js';
export type { IssueOperationOptions, NewcertResult, NewkeyResult, SignResultBody } from './issue/index.js';
export { createBundleOperation, bundleRequestSchema, toBundleInput } from './bundle/index.js';
export type { BundleOperationOptions, BundleRequest } from './bundle/index.js';
export { createOpenApiRoute, OPENAPI_PATH } from './openapi-operation.js';
export type { OpenApiRouteOptions } from './openapi-operation.js';
export { createServerMetrics, createMetricsRoute, createMetricsServer, METRICS_PATH } from './metrics.js';
export type { ServerMetrics, ServerMetricsOptions, WorkerPoolGaugeSource } from './metrics.js';
export { renderAggregatedMetrics } from './metrics-aggregation.js';
export type { MetricsSnapshot } from './metrics-aggregation.js';
export { healthResultSchema } from './health-operation.js';
export { certinfoResultSchema, certinfoNameSchema } from './certinfo-result-schema.js';
export { bundleResultSchema, bundleStatusSchema } from './bundle/bundle-result-schema.js';
export {
  newcertResultSchema,
  newkeyResultSchema,
  signResultSchema,
  infoResultSchema,
  sumsSchema,
} from './issue/issue-result-schemas.js';
export type { SameShape } from './schema-types.js';
export { storeForRequests, STORE_UNAVAILABLE_MESSAGE } from './store/request-store.js';
export { createCertaddOperation, certaddRequestSchema, certaddResultSchema } from './store/certadd-operation.js';
export type { CertaddOperationOptions } from './store/certadd-operation.js';
export { CERTADD_PARSE_MESSAGE } from './store/certadd-request.js';
export {
  createListCertificatesOperation,
  createGetCertificateOperation,
  listCertificatesQuerySchema,
  getCertificateQuerySchema,
  CERTIFICATES_PATH,
} from './store/certificates-operations.js';
export type { CertificatesOperationOptions } from './store/certificates-operations.js';
export { storedCertificateSchema, certificateListResultSchema, toStoredCertificate } from './store/stored-certificate.js';
export type { StoredCertificate, CertificateListResult } from './store/stored-certificate.js';
export { parseRfc3339 } from './store/rfc3339.js';
export type { Rfc3339Time } from './store/rfc3339.js';
export { watchCertificateStore, DEFAULT_COUNT_REFRESH_MS, OTHER_LABEL_VALUE } from './store/store-metrics.js';
export type { CertificateStoreMetrics, CertificateStoreMetricsOptions, CaSignerSource } from './store/store-metrics.js';
export {
  createOcspsignOperation,
  ocspsignRequestSchema,
  ocspsignResultSchema,
  OCSPSIGN_PARSE_MESSAGE,
  createRevokeOperation,
  revokeRequestSchema,
  revokeResultSchema,
  REVOKE_PARSE_MESSAGE,
  createCrlOperation,
  createCrlFileOperation,
  crlResultSchema,
  CRL_FILE_PATH,
} from './revocation/index.js';
export type { OcspsignOperationOptions, OcspsignResult, RevokeOperationOptions, CrlOperationOptions } from './revocation/index.js';
export { RawResponse } from './raw-response.js';
export { isUnderMount } from './mounted-handler.js';
export type { MountedHandler, MountedRequest, MountedResponse } from './mounted-handler.js';
