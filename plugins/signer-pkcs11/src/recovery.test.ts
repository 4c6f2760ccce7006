import { X509Certificate, verify } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogFields, SignerEvent } from '@certsmith/signer-api';
import { createSigner, createSignerContext } from '@certsmith/signer-api';

import { createSelfSignedCaCertificate, generateKeyPair } from './hsm-admin.js';
import plugin from './index.js';
import { acquireModule } from './module-registry.js';
import type { Pkcs11Signer } from './pkcs11-signer.js';
import type { SoftHsm } from './test-support/softhsm.js';
import { setUpSoftHsm } from './test-support/softhsm.js';

// Faults act on the whole library (finalize, close all sessions), so this file has its own process
// and its own SoftHSM; set up at import time, before the module is loaded.
const softHsm: SoftHsm = setUpSoftHsm();
const PIN = 'rec-52e8d1';
const token = softHsm.initToken('recovery', { pin: PIN });
const slotHandle = Buffer.alloc(8);
slotHandle.writeBigUInt64LE(BigInt(token.slot));
const logLines: string[] = [];
const record = (message: string, fields?: LogFields): void => void logLines.push(`${message} ${JSON.stringify(fields ?? {})}`);
/** What the signer reported through `context.reportEvent` (the host counts these in /metrics). */
const events: SignerEvent[] = [];
const context = createSignerContext({
  configDir: softHsm.dir,
  env: { HSM_PIN: PIN },
  logger: { debug: record, info: record, warn: record, error: record },
  onEvent: (event) => events.push(event),
});
const options = { module: softHsm.modulePath, tokenLabel: 'recovery', keyLabel: 'ca', pin: 'env:HSM_PIN', maxConcurrency: 4 };
let signer: Pkcs11Signer;
let caPem: string;

beforeAll(async () => {
  const admin = { module: softHsm.modulePath, tokenLabel: 'recovery', pin: 'env:HSM_PIN', context };
  await generateKeyPair({ ...admin, keyLabel: 'ca', algorithm: 'ecdsa', size: 256 });
  caPem = (await createSelfSignedCaCertificate({ ...admin, keyLabel: 'ca', subject: { CN: 'recovery root' } })).certificatePem;
  signer = (await createSigner(plugin, options, context)) as Pkcs11Signer;
});

afterAll(async () => {
  await signer?.close();
  softHsm.cleanup();
});

const publicKey = () => new X509Certificate(caPem).publicKey;

async function signMany(count: number, onSigned?: (done: number) => void): Promise<PromiseSettledResult<Uint8Array>[]> {
  let done = 0;
  return Promise.allSettled(
    Array.from({ length: count }, (_, index) =>
      signer.sign(new TextEncoder().encode(`tbs ${index}`), 'ECDSA-SHA256').then((signature) => {
        onSigned?.(++done);
        return signature;
      }),
    ),
  );
}

async function waitForHealth(timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await signer.health()).ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('Pkcs11Signer.sign (recovery)', () => {
  it('keeps every request succeeding when all sessions are closed underneath mid-run', async () => {
    events.length = 0;
    const foreign = softHsm.foreignHandle();
    const lease = acquireModule(softHsm.modulePath);
    let closing: Promise<void> | null = null;
    const results = await signMany(120, (done) => {
      if (done === 30 && closing === null) {
        // What an HSM restart or another library user does: every session of the process is gone,
        // and the login with it, while 90 requests are still queued or running. The close waits for
        // calls already inside the library (SoftHSM 2.6 segfaults when a session is closed under a
        // running C_Sign — a real HSM answers the call with an error instead).
        closing = lease.exclusive(() => foreign.C_CloseAllSessions(slotHandle));
      }
    });
    await closing;
    lease.release();
    expect(closing).not.toBeNull();
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    for (const [index, result] of results.entries()) {
      expect(verify('sha256', new TextEncoder().encode(`tbs ${index}`), publicKey(), (result as PromiseFulfilledResult<Uint8Array>).value)).toBe(true);
    }
    expect(logLines.some((line) => line.startsWith('PKCS#11 session lost, reconnecting') && line.includes('CKR_SESSION_HANDLE_INVALID'))).toBe(true);
    expect(await signer.health()).toEqual({ ok: true });
    // Concurrent failures share one reconnection: one recovery, and no outage.
    expect(events).toEqual(['session_recovered']);
  });

  it('reinitialises the library when it was finalized underneath', async () => {
    events.length = 0;
    const lease = acquireModule(softHsm.modulePath);
    await lease.exclusive(() => softHsm.foreignHandle().C_Finalize());
    lease.release();
    const signature = await signer.sign(new TextEncoder().encode('after finalize'), 'ECDSA-SHA256');
    expect(verify('sha256', new TextEncoder().encode('after finalize'), publicKey(), signature)).toBe(true);
    expect(logLines.some((line) => line.includes('CKR_CRYPTOKI_NOT_INITIALIZED'))).toBe(true);
    expect(events).toEqual(['session_recovered']);
  });

  it('reconnects from health() when the login was lost underneath', async () => {
    events.length = 0;
    softHsm.foreignHandle().C_CloseAllSessions(slotHandle);
    expect(await signer.health()).toEqual({ ok: true });
    expect((await signMany(8)).every((result) => result.status === 'fulfilled')).toBe(true);
    expect(events).toEqual(['session_recovered']);
  });

  it('fails with 2500 and reports health down while the token is gone, then recovers by itself', async () => {
    events.length = 0;
    softHsm.removeToken(token);
    const started = Date.now();
    await expect(signer.sign(new TextEncoder().encode('gone'), 'ECDSA-SHA256')).rejects.toMatchObject({
      code: 2500,
      message: expect.stringContaining('PKCS#11 signer unavailable: token labelled "recovery": no initialized token labelled "recovery"'),
    });
    const health = await signer.health();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/no initialized token labelled "recovery" .*; next reconnection attempt in \d+ ms/);
    // Within the back-off window calls fail fast instead of hammering the HSM.
    const fastStart = Date.now();
    await expect(signer.sign(new TextEncoder().encode('still gone'), 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500, message: expect.stringContaining('next reconnection attempt in') });
    expect(Date.now() - fastStart).toBeLessThan(50);
    // Nothing crashed; put the token back and the signer comes back on its own.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await signer.health()).ok).toBe(false);
    softHsm.restoreToken(token);
    expect(await waitForHealth(10_000)).toBe(true);
    logLines.push(`token outage of ${Date.now() - started} ms`);
    const results = await signMany(20);
    expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(logLines.some((line) => line.startsWith('PKCS#11 token is back, signer recovered'))).toBe(true);
    // One outage, one recovery: the failed attempts in between are back-off steps, not new events.
    expect(events).toEqual(['backend_down', 'backend_recovered']);
  });

  it('stops retrying the login when the PIN stops working, so the token is not locked', async () => {
    events.length = 0;
    // Change the user PIN underneath (the process is logged in, so the foreign session may), then drop the sessions.
    const foreign = softHsm.foreignHandle();
    const session = foreign.C_OpenSession(slotHandle, 0x4 | 0x2);
    foreign.C_SetPIN(session, PIN, 'changed-0000');
    foreign.C_CloseAllSessions(slotHandle);
    await expect(signer.sign(new TextEncoder().encode('x'), 'ECDSA-SHA256')).rejects.toMatchObject({
      code: 2500,
      message: expect.stringContaining('login failed (CKR_PIN_INCORRECT); not retrying'),
    });
    const health = await signer.health();
    expect(health).toMatchObject({ ok: false, message: expect.stringContaining('fix options.pin and restart') });
    await expect(signer.sign(new TextEncoder().encode('x'), 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500 });
    expect(events).toEqual(['backend_down']);
  });

  it('never logs the PIN', () => {
    expect(logLines.some((line) => line.includes(PIN))).toBe(false);
  });
});
