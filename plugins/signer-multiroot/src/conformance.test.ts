/**
 * The signer conformance suite (`@certsmith/signer-testkit`) against this plugin. The remote is the
 * testkit's CFSSL-speaking CA on 127.0.0.1 (certsmith's issuer behind `/info` and `/authsign` with
 * the HMAC token, CFSSL envelope and error codes), so the suite runs without Go peers; the real
 * multirootca is exercised by test/multiroot-signer.test.ts. The signer has no raw `sign`: the kit
 * issues through `signRequest`.
 */
import { createSignerContext } from '@certsmith/signer-api';
import { describeSignerConformance, startTestRemoteCa } from '@certsmith/signer-testkit';
import type { TestRemoteCa } from '@certsmith/signer-testkit';
import { afterAll, beforeAll } from 'vitest';

import plugin from './index.js';

const AUTH_KEY_HEX = '0123456789abcdef0123456789abcdef';

let remote: TestRemoteCa;
let url: string;

beforeAll(async () => {
  remote = await startTestRemoteCa({
    config: {
      signing: { default: { usages: ['signing', 'key encipherment', 'server auth', 'client auth'], expiry: '168h', auth_key: 'conformance' } },
      auth_keys: { conformance: { type: 'standard', key: AUTH_KEY_HEX } },
    },
  });
  url = remote.url;
});

afterAll(() => remote.close());

describeSignerConformance(plugin, () => ({ remotes: [url], authKey: 'env:CONFORMANCE_AUTH_KEY', timeoutMs: 10_000 }), {
  title: '@certsmith/signer-multiroot conformance (stub CFSSL remote, authsign)',
  context: () => createSignerContext({ env: { CONFORMANCE_AUTH_KEY: AUTH_KEY_HEX } }),
  invalidOptions: [
    { title: 'a remote that is not http(s)', options: { remotes: ['ftp://127.0.0.1:1'] } },
    { title: 'certFile without keyFile', options: () => ({ remotes: [url], certFile: 'client.pem' }) },
    { title: 'an auth key variable that is not set', options: () => ({ remotes: [url], authKey: 'env:CONFORMANCE_UNSET' }), code: 2001 },
  ],
});
