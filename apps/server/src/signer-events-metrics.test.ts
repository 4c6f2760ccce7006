/**
 * Signer lifecycle events reach `/metrics`: an in-process server with a PKCS#11 signer on a real
 * SoftHSM token; the sessions are closed underneath it (as an HSM restart does), the next signature
 * reconnects, and `certsmith_signer_events_total{event="session_recovered"}` counts it under the
 * signer's label and plugin.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@certsmith/http-api';
import { createSignerContext } from '@certsmith/signer-api';
import { createSelfSignedCaCertificate, generateKeyPair } from '@certsmith/signer-pkcs11';
import { setUpSoftHsm } from '@certsmith/signer-pkcs11/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from './start-server.js';
import type { RunningServer } from './start-server.js';

// SOFTHSM2_CONF must be set before the PKCS#11 module is loaded in this process.
const softHsm = setUpSoftHsm();
const PIN = 'events-7f3a21';
const token = softHsm.initToken('events', { pin: PIN });
const slotHandle = Buffer.alloc(8);
slotHandle.writeBigUInt64LE(BigInt(token.slot));
const env = { HSM_PIN: PIN };

let dir: string;
let server: RunningServer;

beforeAll(async () => {
  const admin = { module: softHsm.modulePath, tokenLabel: 'events', pin: 'env:HSM_PIN', context: createSignerContext({ configDir: softHsm.dir, env }) };
  await generateKeyPair({ ...admin, keyLabel: 'ca', algorithm: 'ecdsa', size: 256 });
  await createSelfSignedCaCertificate({ ...admin, keyLabel: 'ca', subject: { CN: 'events root' } });
  dir = await mkdtemp(join(softHsm.dir, 'server-'));
  const config = { signers: { hsm: { plugin: '@certsmith/signer-pkcs11', options: { module: softHsm.modulePath, tokenLabel: 'events', keyLabel: 'ca', pin: 'env:HSM_PIN' } } } };
  await writeFile(join(dir, 'certsmith.json'), JSON.stringify(config));
  server = await startServer({
    port: 0,
    workers: 1,
    dataDir: join(dir, 'data'),
    configFile: join(dir, 'certsmith.json'),
    env,
    logger: createLogger({ level: 'silent' }),
  });
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  softHsm.cleanup();
});

async function eventCount(event: string): Promise<number | undefined> {
  const text = await (await fetch(server.metricsUrl)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`certsmith_signer_events_total{label="hsm",plugin="@certsmith/signer-pkcs11",event="${event}"} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

const newcert = () =>
  fetch(`${server.url}/api/v1/cfssl/newcert`, { method: 'POST', body: JSON.stringify({ request: { CN: 'events.example', hosts: ['events.example'] }, label: 'hsm' }) });

describe('certsmith_signer_events_total', () => {
  it('counts a PKCS#11 session recovery under the signer label and plugin', async () => {
    expect((await newcert()).status).toBe(200);
    expect(await eventCount('session_recovered')).toBeUndefined();
    // What an HSM restart does: every session of the process is gone, and the login with it.
    softHsm.foreignHandle().C_CloseAllSessions(slotHandle);
    expect((await newcert()).status).toBe(200);
    expect(await eventCount('session_recovered')).toBe(1);
    expect(await eventCount('backend_down')).toBeUndefined();
  });
});
