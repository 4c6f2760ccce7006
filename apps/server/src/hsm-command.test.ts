import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';

import { createSignerContext } from '@certsmith/signer-api';
import { setUpSoftHsm } from '@certsmith/signer-pkcs11/test-support';

import { registerHsmCommand } from './hsm-command.js';

// SOFTHSM2_CONF must be set before the PKCS#11 module is loaded in this process.
const softHsm = setUpSoftHsm();
const PIN = 'cli-6d20be';
softHsm.initToken('cli', { pin: PIN });
afterAll(() => softHsm.cleanup());

/** Run `certsmith hsm …` in-process; returns parsed stdout, stderr and the exit code. */
async function hsm(args: string[]): Promise<{ json: any; stderr: string; exitCode: number }> {
  let stdout = '';
  let stderr = '';
  let exitCode = 0;
  const program = new Command('certsmith').exitOverride();
  registerHsmCommand(program, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    setExitCode: (code) => void (exitCode = code),
    context: createSignerContext({ configDir: softHsm.dir, env: { HSM_PIN: PIN, BAD_PIN: '999999' } }),
  });
  await program.parseAsync(['hsm', ...args], { from: 'user' });
  return { json: stdout === '' ? null : JSON.parse(stdout), stderr, exitCode };
}

const token = ['--module', softHsm.modulePath, '--token-label', 'cli'];

describe('certsmith hsm', () => {
  it('lists slots as JSON when running list', async () => {
    const { json, exitCode } = await hsm(['list', '--module', softHsm.modulePath]);
    expect(exitCode).toBe(0);
    expect(json.slots.some((slot: { token: { label: string } | null }) => slot.token?.label === 'cli')).toBe(true);
  });

  it('generates a key, self-signs it on the token and lists both when running genkey, initca and keys', async () => {
    const key = await hsm(['genkey', ...token, '--pin', 'env:HSM_PIN', '--key-label', 'root', '--algo', 'ecdsa', '--size', '384']);
    expect(key.exitCode).toBe(0);
    expect(key.json.key).toMatchObject({ keyLabel: 'root', algorithm: 'ecdsa', size: 384 });

    writeFileSync(join(softHsm.dir, 'ca-csr.json'), JSON.stringify({ CN: 'CLI Root CA', names: [{ C: 'US', O: 'certsmith' }], ca: { expiry: '87600h' } }));
    const ca = await hsm(['initca', ...token, '--pin', 'env:HSM_PIN', '--key-label', 'root', '--request', 'ca-csr.json', '--org-unit', 'PKI']);
    expect(ca.stderr).toBe('');
    expect(ca.json.stored_on_token).toBe(true);
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: ca.json.cert, encoding: 'utf8' });
    expect(text).toContain('Subject: C = US, O = certsmith, OU = PKI, CN = CLI Root CA');
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA384');
    expect(text).toMatch(/Not After : .*20(35|36) GMT/);

    const objects = await hsm(['keys', ...token, '--pin', 'env:HSM_PIN']);
    const classes = objects.json.objects.filter((object: { label: string }) => object.label === 'root').map((object: { class: string }) => object.class).sort();
    expect(classes).toEqual(['certificate', 'private-key', 'public-key']);
  });

  it('prints a CA CSR signed on the token when running csr', async () => {
    await hsm(['genkey', ...token, '--pin', 'env:HSM_PIN', '--key-label', 'intermediate', '--key-id', '0a0b']);
    const { json, exitCode } = await hsm(['csr', ...token, '--pin', 'env:HSM_PIN', '--key-id', '0a0b', '--cn', 'CLI Intermediate', '--hosts', 'ca.example.com, 192.0.2.1']);
    expect(exitCode).toBe(0);
    const text = execFileSync('openssl', ['req', '-verify', '-noout', '-text'], { input: json.csr, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    expect(text).toContain('Subject: CN = CLI Intermediate');
    expect(text).toContain('DNS:ca.example.com, IP Address:192.0.2.1');
    expect(text).toContain('CA:TRUE');
  });

  it('reports the failing flag on stderr with exit code 1 and no PIN when the PIN is wrong', async () => {
    const { json, stderr, exitCode } = await hsm(['keys', ...token, '--pin', 'env:BAD_PIN']);
    expect(json).toBeNull();
    expect(exitCode).toBe(1);
    expect(stderr).toBe('certsmith hsm keys: --pin: login failed (CKR_PIN_INCORRECT) (code 2000)\n');
  });

  it('refuses an inline PIN without echoing it', async () => {
    const { stderr, exitCode } = await hsm(['keys', ...token, '--pin', PIN]);
    expect(exitCode).toBe(1);
    expect(stderr).toContain('--pin: must be a reference, env:NAME or file:PATH');
    expect(stderr).not.toContain(PIN);
  });
});
