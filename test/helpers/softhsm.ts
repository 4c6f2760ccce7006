/**
 * A SoftHSMv2 token for end-to-end tests, set up the way an operator does it: a token initialised
 * with `softhsm2-util`, CA keys generated and self-signed ON the token with `certsmith hsm
 * genkey/initca` (the keys never leave it), and the server pointed at it with a
 * `@certsmith/signer-pkcs11` signer whose PIN comes from the environment (`env:HSM_PIN`).
 *
 * The temporary SoftHSM itself (token directory, `softhsm2.conf`, `SOFTHSM2_CONF`, module path,
 * a failure with an install hint when SoftHSM is missing) is the plugin's own test support, so the
 * plugin's tests and these share one setup. Like it, one token per test file (vitest runs each file
 * in its own process, and SoftHSM reads its configuration once per process).
 */
import { randomBytes } from 'node:crypto';

import { setUpSoftHsm } from '@certsmith/signer-pkcs11/test-support';

import { spawnCertsmith } from './certsmith-process.js';

/** The variable every test's signer reads the user PIN from: a PIN is never written into a config. */
const PIN_ENV = 'HSM_PIN';

/** What `createSoftHsmToken` makes; every field has a random default. */
export interface SoftHsmTokenOptions {
  /** Token label (`--token-label`, `tokenLabel`). */
  label?: string;
  /** User PIN; random by default, so that a test looking for it in output finds only a leak. */
  pin?: string;
  soPin?: string;
}

/** A CA key to make on the token with `certsmith hsm genkey` and `certsmith hsm initca`. */
export interface HsmCaOptions {
  keyLabel: string;
  algo: 'ecdsa' | 'rsa';
  /** Key size; the CLI's default for `algo` when left out. */
  size?: number;
  /** Common name of the self-signed CA certificate. */
  cn: string;
}

/** A CA made on the token. */
export interface HsmCa {
  keyLabel: string;
  /** The self-signed certificate `hsm initca` printed (and stored on the token). */
  certificatePem: string;
  /** Everything the two CLI runs wrote (stdout and stderr), for tests that search output for secrets. */
  output: string;
}

/** The `@certsmith/signer-pkcs11` options for a key on the token. */
export interface HsmSignerOptions {
  module: string;
  tokenLabel: string;
  keyLabel: string;
  pin: `env:${string}`;
  maxConcurrency?: number;
}

/** An initialised SoftHSM token and how certsmith reaches it. */
export interface SoftHsmToken {
  /** Temporary folder of this file's SoftHSM; tests may write their own files here. Gone after `cleanup`. */
  readonly dir: string;
  /** Path of `libsofthsm2.so`. */
  readonly modulePath: string;
  readonly label: string;
  readonly pin: string;
  readonly soPin: string;
  /** `{ HSM_PIN: pin }`: the variables the signer options refer to. */
  readonly pinEnv: Readonly<Record<string, string>>;
  /** Environment for spawned certsmith processes: this process's, plus `SOFTHSM2_CONF` and `HSM_PIN`. */
  readonly env: NodeJS.ProcessEnv;
  /** `--module … --token-label … --pin env:HSM_PIN`, the token flags of `certsmith hsm` commands. */
  readonly cliArgs: readonly string[];
  /** Signer options for `keyLabel` on this token, PIN by environment reference. */
  signerOptions(keyLabel: string, extra?: { maxConcurrency?: number }): HsmSignerOptions;
  /** A `signers` entry of a certsmith config (`{ plugin, options }`) for `keyLabel`. */
  signer(keyLabel: string, extra?: { maxConcurrency?: number }): { plugin: '@certsmith/signer-pkcs11'; options: HsmSignerOptions };
  /** Generate a key pair on the token and self-sign it as a CA, through the built CLI. */
  createCa(ca: HsmCaOptions): Promise<HsmCa>;
  /** Remove the SoftHSM folder (tokens and anything a test wrote there). */
  cleanup(): void;
}

/** Run the built CLI to completion (bounded), throwing with its stderr when it fails; returns stdout and the whole output. */
async function runCertsmith(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; output: string }> {
  const child = spawnCertsmith(args, env);
  const status = await child.waitForExit(60_000);
  const stdout = child.lines.join('\n');
  if (status.code !== 0) throw new Error(`certsmith ${args.join(' ')} failed (${status.code ?? status.signal}): ${child.stderr()}`);
  return { stdout, output: `${stdout}\n${child.stderr()}` };
}

/**
 * Create this test file's SoftHSM and initialise one token on it. Throws when SoftHSM is not
 * installed: CI installs it, so a missing one is a broken machine, not a test to skip.
 */
export function createSoftHsmToken(options: SoftHsmTokenOptions = {}): SoftHsmToken {
  const softHsm = setUpSoftHsm();
  const label = options.label ?? `certsmith-${randomBytes(4).toString('hex')}`;
  const token = softHsm.initToken(label, { pin: options.pin ?? `pin-${randomBytes(6).toString('hex')}`, soPin: options.soPin ?? `so-${randomBytes(6).toString('hex')}` });
  const pinEnv = { [PIN_ENV]: token.pin };
  const env = { ...softHsm.env, ...pinEnv };
  const cliArgs = ['--module', softHsm.modulePath, '--token-label', label, '--pin', `env:${PIN_ENV}`];
  const signerOptions = (keyLabel: string, extra: { maxConcurrency?: number } = {}): HsmSignerOptions => ({
    module: softHsm.modulePath,
    tokenLabel: label,
    keyLabel,
    pin: `env:${PIN_ENV}`,
    ...extra,
  });

  return {
    dir: softHsm.dir,
    modulePath: softHsm.modulePath,
    label,
    pin: token.pin,
    soPin: token.soPin,
    pinEnv,
    env,
    cliArgs,
    signerOptions,
    signer: (keyLabel, extra) => ({ plugin: '@certsmith/signer-pkcs11', options: signerOptions(keyLabel, extra) }),
    async createCa(ca) {
      const size = ca.size === undefined ? [] : ['--size', String(ca.size)];
      const genkey = await runCertsmith(['hsm', 'genkey', ...cliArgs, '--key-label', ca.keyLabel, '--algo', ca.algo, ...size], env);
      const initca = await runCertsmith(['hsm', 'initca', ...cliArgs, '--key-label', ca.keyLabel, '--cn', ca.cn], env);
      const { cert } = JSON.parse(initca.stdout) as { cert: string };
      return { keyLabel: ca.keyLabel, certificatePem: cert, output: `${genkey.output}\n${initca.output}` };
    },
    cleanup: () => softHsm.cleanup(),
  };
}
