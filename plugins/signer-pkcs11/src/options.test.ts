import { describe, expect, it } from 'vitest';

import { checkOptionsSchema } from '@certsmith/signer-api';

import { assertMainThread } from './module-registry.js';
import { PKCS11_OPTIONS_SCHEMA, validatePkcs11Options } from './options.js';
import { Semaphore } from './semaphore.js';

const base = { module: '/usr/lib/softhsm/libsofthsm2.so', tokenLabel: 'ca', keyLabel: 'ca-key', pin: 'env:HSM_PIN' };

describe('validatePkcs11Options', () => {
  it('fills maxConcurrency and normalises keyId when options are valid', () => {
    expect(validatePkcs11Options({ ...base, keyId: '01:AB' })).toEqual({ ...base, keyId: '01ab', maxConcurrency: 1 });
  });

  it('refuses an inline PIN without repeating it', () => {
    let error: unknown;
    try {
      validatePkcs11Options({ ...base, pin: 'secret-1234' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 2000 });
    expect((error as Error).message).toContain('options.pin: must be a reference, env:NAME or file:PATH');
    expect((error as Error).message).not.toContain('secret-1234');
  });

  it.each([
    [{ ...base, slot: 3 }, 'options.tokenLabel: choose the token with exactly one of tokenLabel, slot or tokenSerial, got tokenLabel, slot'],
    [{ module: base.module, keyLabel: 'k', pin: base.pin }, 'options.tokenLabel: choose the token with exactly one of tokenLabel, slot or tokenSerial, got none'],
    [{ module: base.module, tokenLabel: 'ca', pin: base.pin }, 'options.keyLabel: choose the key with keyLabel, keyId or both'],
    [{ ...base, keyId: 'xyz' }, 'options.keyId: must be hexadecimal'],
    [{ ...base, maxConcurrency: 0 }, 'options.maxConcurrency: must be an integer from 1 to 64, got 0'],
    [{ ...base, module: '' }, 'options.module: must name the PKCS#11 library file'],
  ])('throws 2000 naming the option when given %j', (options, message) => {
    expect(() => validatePkcs11Options(options)).toThrow(message);
  });
});

describe('PKCS11_OPTIONS_SCHEMA', () => {
  it('reports a misspelt option when checked', () => {
    expect(checkOptionsSchema(PKCS11_OPTIONS_SCHEMA, { ...base, keylabel: 'x' })).toEqual(['options.keylabel is not a known option']);
  });
});

describe('assertMainThread', () => {
  it('throws 2000 when called off the main thread', () => {
    expect(() => assertMainThread(false)).toThrow(/only loaded on the main thread/);
    expect(() => assertMainThread(true)).not.toThrow();
  });
});

describe('Semaphore', () => {
  it('never admits more holders than permits and serves waiters in order', async () => {
    const semaphore = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        semaphore.use(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 1));
          order.push(index);
          running--;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(order.slice(3).every((value, index, all) => index === 0 || value > (all[index - 1] as number))).toBe(true);
  });
});
