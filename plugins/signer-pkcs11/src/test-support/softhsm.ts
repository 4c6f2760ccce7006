/**
 * A throw-away SoftHSMv2 for tests: a temporary token directory, a `softhsm2.conf` pointing at it,
 * `SOFTHSM2_CONF` set for this process (SoftHSM reads it in `C_Initialize`, so this must happen
 * before the module is first loaded) and tokens initialised with `softhsm2-util`. Missing SoftHSM is
 * a failure with an install hint, never a silent skip: CI (`.ci/run`) installs it.
 *
 * One instance per process: SoftHSM reads its configuration once per initialisation, and vitest
 * runs each test file in its own process, so each file calls {@link setUpSoftHsm} once at the top.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pkcs11js from 'pkcs11js';

import { isModuleInitialized } from '../module-registry.js';

/** Where distributions install the SoftHSMv2 module. `SOFTHSM2_MODULE` overrides. */
const MODULE_CANDIDATES = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
  '/opt/homebrew/lib/softhsm/libsofthsm2.so',
];

/** A token created by {@link SoftHsm.initToken}. */
export interface SoftHsmToken {
  label: string;
  /** Slot ID SoftHSM assigned (derived from the token serial). */
  slot: number;
  /** User PIN (test value). */
  pin: string;
  soPin: string;
  /** Token directory name under the token dir (used to make the token disappear). */
  directory: string;
}

/** A temporary SoftHSMv2 installation. */
export interface SoftHsm {
  /** Temporary root (config file, tokens, scratch files for tests). */
  readonly dir: string;
  readonly tokenDir: string;
  readonly confPath: string;
  /** Path of `libsofthsm2.so`. */
  readonly modulePath: string;
  /** Environment for child processes (openssl, pkcs11-tool, the CLI) that must see the same tokens. */
  readonly env: NodeJS.ProcessEnv;
  /** Initialise a token in the free slot. Call before the module is loaded in this process. */
  initToken(label: string, pins?: { pin?: string; soPin?: string }): SoftHsmToken;
  /** Move a token's directory away: after the next library reinitialisation the token is gone. */
  removeToken(token: SoftHsmToken): void;
  /** Move it back. */
  restoreToken(token: SoftHsmToken): void;
  /**
   * A second pkcs11js handle on the same library: `dlopen` returns the already loaded copy, so
   * `C_CloseAllSessions`/`C_Finalize` through it act on this process's sessions "underneath" the
   * signer, as a crashed HSM daemon or another library user would.
   */
  foreignHandle(): pkcs11js.PKCS11;
  /** Delete the temporary directory. */
  cleanup(): void;
}

function findSoftHsmUtil(): void {
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'pipe' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('softhsm2-util not found: the PKCS#11 tests need a real SoftHSMv2 (Debian/Ubuntu: apt-get install softhsm2; CI installs it in .ci/run)');
    }
    throw error;
  }
}

function findModule(): string {
  const override = process.env['SOFTHSM2_MODULE'];
  if (override) {
    if (!existsSync(override)) throw new Error(`SOFTHSM2_MODULE=${override} does not exist`);
    return override;
  }
  const found = MODULE_CANDIDATES.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`libsofthsm2.so not found in ${MODULE_CANDIDATES.join(', ')}; install softhsm2 or set SOFTHSM2_MODULE`);
  return found;
}

let current: SoftHsm | null = null;

/**
 * Create the temporary SoftHSM for this process (or return the one already created). Throws when
 * `softhsm2-util` or the module is missing, or when the module was already initialised with
 * another configuration.
 */
export function setUpSoftHsm(): SoftHsm {
  if (current) return current;
  findSoftHsmUtil();
  const modulePath = findModule();
  if (isModuleInitialized(modulePath)) throw new Error('setUpSoftHsm must run before the PKCS#11 module is loaded in this process');
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-softhsm-'));
  const tokenDir = join(dir, 'tokens');
  const parked = join(dir, 'removed');
  mkdirSync(tokenDir);
  mkdirSync(parked);
  const confPath = join(dir, 'softhsm2.conf');
  writeFileSync(confPath, `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
  process.env['SOFTHSM2_CONF'] = confPath;
  const env = { ...process.env, SOFTHSM2_CONF: confPath };
  let foreign: pkcs11js.PKCS11 | null = null;

  const softHsm: SoftHsm = {
    dir,
    tokenDir,
    confPath,
    modulePath,
    env,
    initToken(label, pins = {}) {
      const pin = pins.pin ?? '1234';
      const soPin = pins.soPin ?? '5678';
      const before = new Set(readdirSync(tokenDir));
      const output = execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', soPin], { env, encoding: 'utf8', stdio: 'pipe' });
      const slot = /reassigned to slot (\d+)/.exec(output);
      const directory = readdirSync(tokenDir).find((name) => !before.has(name));
      if (!slot || !directory) throw new Error(`softhsm2-util did not report the new token: ${output}`);
      return { label, slot: Number(slot[1]), pin, soPin, directory };
    },
    removeToken(token) {
      renameSync(join(tokenDir, token.directory), join(parked, token.directory));
    },
    restoreToken(token) {
      renameSync(join(parked, token.directory), join(tokenDir, token.directory));
    },
    foreignHandle() {
      if (!foreign) {
        foreign = new pkcs11js.PKCS11();
        foreign.load(modulePath);
      }
      try {
        foreign.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (error) {
        if (!/CKR_CRYPTOKI_ALREADY_INITIALIZED/.test((error as Error).message)) throw error;
      }
      return foreign;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  current = softHsm;
  return softHsm;
}
