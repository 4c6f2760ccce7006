import { AssertionError } from 'node:assert';

import type { Signer } from '@certsmith/signer-api';
import { SignerUnavailableError, createSignerContext, defineSigner } from '@certsmith/signer-api';
import { afterAll, describe, expect, it } from 'vitest';

import type { ConformancePlan, SkippedCase } from './conformance-plan.js';
import { planSignerConformance } from './conformance-plan.js';
import { createTestCa } from './test-ca.js';

const plans: ConformancePlan[] = [];
afterAll(async () => {
  await Promise.all(plans.map((plan) => plan.teardown()));
});

/** A P-256 memory signer, with parts replaced. */
async function memorySigner(overrides: (signer: Signer) => Partial<Signer> = () => ({})): Promise<Signer> {
  const signer = (await createTestCa()).createSigner();
  return { ...signer, ...overrides(signer) };
}

function pluginWith(create: () => Promise<Signer>, apiVersion = '^1.0.0') {
  return defineSigner<unknown>({
    meta: { name: 'broken-signer', apiVersion },
    optionsSchema: { type: 'object', additionalProperties: false },
    create,
  });
}

function plan(plugin: unknown, options: unknown = {}, settings = {}): ConformancePlan {
  const created = planSignerConformance(plugin, options, settings);
  plans.push(created);
  return created;
}

/** Run the case whose title starts with `title` in `group`. */
function run(subject: ConformancePlan, group: string, title: string): Promise<SkippedCase | void> {
  const found = subject.cases.find((entry) => entry.group === group && entry.title.startsWith(title));
  if (!found) throw new Error(`no case ${group} › ${title}; have ${subject.cases.map((entry) => `${entry.group} › ${entry.title}`).join('; ')}`);
  return found.run();
}

describe('planSignerConformance', () => {
  it('titles the suite with meta.name when given the plugin', () => {
    expect(plan(pluginWith(() => memorySigner())).title).toBe('signer conformance: broken-signer');
  });

  it('fails the definition case with code 2000 when the module exports no plugin', async () => {
    await expect(run(plan({ default: { create() {} } }), 'plugin definition', 'is a defineSigner definition')).rejects.toMatchObject({ code: 2000 });
  });

  it('fails the range case with code 2000 when apiVersion excludes the host version', async () => {
    const subject = plan(pluginWith(() => memorySigner(), '^2.0.0'));
    await expect(run(subject, 'plugin definition', 'declares an apiVersion range')).rejects.toMatchObject({ code: 2000 });
  });

  it('fails the future-host case when apiVersion is *', async () => {
    const subject = plan(pluginWith(() => memorySigner(), '*'));
    await expect(run(subject, 'plugin definition', 'is refused with code 2000')).rejects.toBeInstanceOf(AssertionError);
  });

  it('fails the null-options case when the plugin validates nothing', async () => {
    const lax = defineSigner({ meta: { name: 'lax-signer', apiVersion: '^1.0.0' }, create: () => memorySigner() });
    await expect(run(plan(lax), 'createSigner()', 'rejects with code 2000 naming the plugin when given null options')).rejects.toBeInstanceOf(AssertionError);
  });

  it('passes a custom refusal when create rejects with its code', async () => {
    const secretive = defineSigner<{ pin: string }>({
      meta: { name: 'secretive-signer', apiVersion: '^1.0.0' },
      async create(options, context) {
        await context.resolveSecret(options.pin);
        return memorySigner();
      },
    });
    const subject = plan(secretive, { pin: 'env:PIN' }, {
      context: () => createSignerContext({ env: { PIN: '1234' } }),
      defaultInvalidOptions: false,
      invalidOptions: [{ title: 'a PIN variable that is not set', options: { pin: 'env:NOT_SET' }, code: 2001 }],
    });
    expect(subject.cases.map((entry) => entry.title)).toContain('rejects with code 2001 when given a PIN variable that is not set');
    await expect(run(subject, 'createSigner()', 'rejects with code 2001')).resolves.toBeUndefined();
  });

  it('fails the sign case naming the algorithm when a signature does not verify', async () => {
    const subject = plan(
      pluginWith(() =>
        memorySigner((signer) => ({
          async sign(tbs, algorithm) {
            const signature = await signer.sign!(tbs, algorithm);
            if (algorithm === 'ECDSA-SHA384') signature[signature.length - 1]! ^= 1;
            return signature;
          },
        })),
      ),
    );
    await expect(run(subject, 'sign()', 'returns signatures that verify')).rejects.toThrow(/sign\(ECDSA-SHA384\) verifies with the certificate key: signature does not verify/);
  });

  it('fails the unadvertised-algorithm case when the error has no code', async () => {
    const subject = plan(
      pluginWith(() =>
        memorySigner((signer) => ({
          async sign(tbs, algorithm) {
            if (!signer.algorithms.includes(algorithm)) throw new Error('no such algorithm');
            return signer.sign!(tbs, algorithm);
          },
        })),
      ),
    );
    await expect(run(subject, 'sign()', 'rejects with a numeric code')).rejects.toThrow(/rejected without a numeric code: Error: no such algorithm/);
  });

  it('fails the close case when sign still works after close', async () => {
    const subject = plan(pluginWith(() => memorySigner(() => ({ async close() {} }))));
    await expect(run(subject, 'close()', 'makes a later sign reject')).rejects.toThrow(/sign succeeded after close/);
  });

  it('fails the issuance case when the certificate is not the key’s', async () => {
    const other = await createTestCa();
    const subject = plan(pluginWith(() => memorySigner(() => ({ getCertificate: async () => ({ der: other.certificateDer, pem: other.certificatePem }) }))));
    await expect(run(subject, 'issuer newCertificate()', 'issues a certificate')).rejects.toThrow(/does not verify with the CA key/);
  });

  it('skips the sign cases when the signer implements signRequest only', async () => {
    const remote = pluginWith(async () => {
      const signer = await memorySigner();
      return { ...signer, algorithms: [], sign: undefined, signRequest: async () => ({ certificatePem: '' }) };
    });
    await expect(run(plan(remote), 'sign()', 'returns signatures that verify')).resolves.toEqual({ skipped: 'the signer implements signRequest only' });
  });

  it('closes every signer it created when torn down', async () => {
    let open = 0;
    const counting = pluginWith(() =>
      memorySigner((signer) => {
        open++;
        return {
          async close() {
            if (open > 0) open--;
            await signer.close();
          },
        };
      }),
    );
    const subject = plan(counting);
    await run(subject, 'createSigner()', 'creates a signer');
    await run(subject, 'close()', 'resolves when called twice');
    await subject.teardown();
    expect(open).toBe(0);
  });

  it('rejects like the plugin when the signer cannot be created', async () => {
    const failing = pluginWith(async () => {
      throw new SignerUnavailableError('token not present');
    });
    await expect(run(plan(failing), 'getCertificate()', 'returns one certificate')).rejects.toMatchObject({ code: 2500, message: 'token not present' });
  });
});
