/**
 * Failover of @certsmith/signer-multiroot between two real `multirootca` processes serving the
 * same roots: which process served a request is read from its log (one `signature:` line per issuance).
 */
import { createSigner, createSignerContext } from '@certsmith/signer-api';
import type { MultirootSigner } from '@certsmith/signer-multiroot';
import plugin from '@certsmith/signer-multiroot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { within } from './helpers/within.js';
import type { MultirootFixture, RestartableMultirootca } from './peers/multiroot-fixture.js';
import { createMultirootFixture, startRestartableMultirootca } from './peers/multiroot-fixture.js';

const TIMEOUT_MS = 4_000;
// Long enough that the restarted first remote is still inside its down period when checked below.
const BACKOFF_MS = 2_500;

let fixture: MultirootFixture;
let first: RestartableMultirootca;
let second: RestartableMultirootca;
let signer: MultirootSigner;

async function sign(commonName: string): Promise<string> {
  const { certificatePem } = await signer.signRequest({ certificate_request: await fixture.createCsr(commonName), label: 'a' });
  return certificatePem;
}

/**
 * Assert how many certificates `peer` signed. The log line reaches us through a pipe, possibly after
 * the HTTP answer, so wait (bounded) for the count before comparing.
 */
async function expectSignatures(peer: RestartableMultirootca, count: number): Promise<void> {
  await within(2_000, async () => peer.countSignatures('a') >= count).catch(() => undefined);
  expect(peer.countSignatures('a')).toBe(count);
}

beforeAll(async () => {
  fixture = await createMultirootFixture({ labels: ['a', 'b'] });
  [first, second] = await Promise.all([
    startRestartableMultirootca({ rootsFile: fixture.rootsFile, defaultLabel: 'a' }),
    startRestartableMultirootca({ rootsFile: fixture.rootsFile, defaultLabel: 'a' }),
  ]);
  const context = createSignerContext({ env: { MR_AUTH_KEY: fixture.authKeyHex } });
  signer = (await createSigner(
    plugin,
    { remotes: [first.url, second.url], authKey: 'env:MR_AUTH_KEY', timeoutMs: TIMEOUT_MS, connectTimeoutMs: 1_000, backoffInitialMs: BACKOFF_MS, backoffMaxMs: 5_000 },
    context,
  )) as MultirootSigner;
});

afterAll(async () => {
  await signer?.close();
  await Promise.all([first?.stop(), second?.stop()]);
  await fixture?.cleanup();
});

describe('signRequest failover', () => {
  it('uses the first remote when both are up', async () => {
    expect((await fixture.verifyIssuedBy(await sign('both-up.example'), 'a')).ok).toBe(true);
    await expectSignatures(first, 1);
    await expectSignatures(second, 0);
  });

  it('succeeds through the second remote when the first is stopped', async () => {
    await first.stop();
    expect((await fixture.verifyIssuedBy(await sign('first-down.example'), 'a')).ok).toBe(true);
    await expectSignatures(second, 1);
    expect(signer.remoteStates()[0]).toMatchObject({ remote: first.url, down: true, consecutiveFailures: 1 });
  });

  it('fails with a 6000 naming both remotes within the timeout when both are down', async () => {
    await second.stop();
    const started = Date.now();
    const error = (await sign('both-down.example').then(
      () => new Error('expected a rejection'),
      (caught: unknown) => caught,
    )) as Error & { code: number };
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    expect(error).toMatchObject({ code: 6000 });
    expect(error.message).toContain(`${first.url} (ECONNREFUSED)`);
    expect(error.message).toContain(`${second.url} (ECONNREFUSED)`);
  });

  it('uses the first remote again once it is restarted and its back-off has passed', async () => {
    await second.start();
    // Whatever the first remote's state, the second serves while the first is still stopped.
    await sign('second-back.example');
    await expectSignatures(second, 2);
    await first.start();
    // Inside the back-off period the restarted first remote is skipped…
    expect(signer.remoteStates()[0]?.down).toBe(true);
    await sign('still-backing-off.example');
    await expectSignatures(first, 1);
    await expectSignatures(second, 3);
    // …and tried first again once the period ends.
    await within(2 * BACKOFF_MS, async () => signer.remoteStates()[0]?.down === false);
    expect((await fixture.verifyIssuedBy(await sign('first-again.example'), 'a')).ok).toBe(true);
    await expectSignatures(first, 2);
    await expectSignatures(second, 3);
    expect(signer.remoteStates()[0]).toMatchObject({ down: false, consecutiveFailures: 0 });
  });
});
