import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SIGNER_EVENTS, createSignerContext, isSignerEvent, parseSecretReference } from './signer-context.js';
import type { SignerEvent } from './signer-context.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signer-context-'));
  await writeFile(join(dir, 'pin.txt'), '1234\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('parseSecretReference', () => {
  it('parses env and file references when prefixed', () => {
    expect(parseSecretReference('env:HSM_PIN')).toEqual({ kind: 'env', name: 'HSM_PIN' });
    expect(parseSecretReference('file:pin.txt')).toEqual({ kind: 'file', path: 'pin.txt' });
  });

  it('returns null when the value has no known prefix', () => {
    expect(parseSecretReference('/etc/ca-key.pem')).toBeNull();
  });
});

describe('createSignerContext', () => {
  it('resolves relative paths against the config dir when given one', () => {
    const context = createSignerContext({ configDir: dir });
    expect(context.resolvePath('ca.pem')).toBe(join(dir, 'ca.pem'));
    expect(context.resolvePath('/abs/ca.pem')).toBe('/abs/ca.pem');
  });

  it('reads env secrets when the variable is set', async () => {
    const context = createSignerContext({ env: { HSM_PIN: '9876' } });
    await expect(context.resolveSecret('env:HSM_PIN')).resolves.toBe('9876');
  });

  it('reads file secrets relative to the config dir and trims the newline when the file ends in one', async () => {
    const context = createSignerContext({ configDir: dir });
    await expect(context.resolveSecret('file:pin.txt')).resolves.toBe('1234');
    const bytes = await context.resolveSecretBytes('file:pin.txt');
    expect(new TextDecoder().decode(bytes)).toBe('1234\n');
  });

  it('rejects with code 2001 when the variable is unset', async () => {
    const context = createSignerContext({ env: {} });
    await expect(context.resolveSecret('env:NOPE')).rejects.toMatchObject({ code: 2001, message: 'environment variable NOPE is not set' });
  });

  it('rejects with code 2001 without echoing the value when it is not a reference', async () => {
    const context = createSignerContext();
    const error = (await context.resolveSecret('hunter2').then(
      () => ({ code: 0, message: 'resolved' }),
      (e: unknown) => e as Error & { code: number },
    ));
    expect(error.code).toBe(2001);
    expect(error.message).not.toContain('hunter2');
  });

  it('rejects with code 2001 when the file is missing', async () => {
    const context = createSignerContext({ configDir: dir });
    await expect(context.resolveSecret('file:missing.txt')).rejects.toMatchObject({ code: 2001 });
  });
});

describe('SignerContext.reportEvent', () => {
  it('passes known events to the host callback', () => {
    const seen: SignerEvent[] = [];
    const context = createSignerContext({ onEvent: (event) => seen.push(event) });
    for (const event of SIGNER_EVENTS) context.reportEvent?.(event);
    expect(seen).toEqual(['session_recovered', 'backend_down', 'backend_recovered']);
  });

  it('drops names outside the list, so a plain-JavaScript plugin cannot make an unbounded label', () => {
    const seen: string[] = [];
    const context = createSignerContext({ onEvent: (event) => seen.push(event) });
    context.reportEvent?.('token 1234 gone' as SignerEvent);
    context.reportEvent?.(undefined as unknown as SignerEvent);
    expect(seen).toEqual([]);
    expect(isSignerEvent('backend_down')).toBe(true);
    expect(isSignerEvent('BACKEND_DOWN')).toBe(false);
  });

  it('never throws: without a host callback, or when the callback fails', () => {
    expect(() => createSignerContext().reportEvent?.('backend_down')).not.toThrow();
    const failing = createSignerContext({
      onEvent: () => {
        throw new Error('metrics broken');
      },
    });
    expect(() => failing.reportEvent?.('backend_recovered')).not.toThrow();
  });
});
