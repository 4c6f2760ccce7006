/**
 * One owner of each PKCS#11 library per process. `C_Initialize`/`C_Finalize` act on the whole
 * library, not on a caller (PKCS#11 v2.40 §5.4): two signers that each initialised and finalised
 * the same module would log each other out. So every signer and every admin call in this process
 * borrows the module from this registry, keyed by the module's resolved path, and the last one to
 * leave finalises it.
 *
 * The registry also refuses to run in a worker thread. The server's pool workers can be stopped
 * at any time (a stuck or crashed worker is replaced); a module loaded there would die with the worker, in the
 * middle of a token operation, and with it the login state of every other user of the token.
 * Signers must be constructed on the main thread; workers only ever see DER bytes.
 */
import { resolve } from 'node:path';
import { isMainThread } from 'node:worker_threads';

import { Module } from 'graphene-pk11';
import pkcs11js from 'pkcs11js';

import { ckrName, optionError, reasonSuffix } from './pkcs11-errors.js';

/** A borrowed PKCS#11 library. */
export interface ModuleLease {
  /** Absolute path of the library (the registry key). */
  readonly path: string;
  /** The graphene module (shared: never finalise or close it directly). */
  readonly module: Module;
  /** Increments on every (re)initialisation; handles from an older generation are dead. */
  readonly generation: number;
  /**
   * Run an asynchronous native operation (a `C_Sign` on libuv's thread pool, a key generation).
   * A library reset waits until no such operation is running: PKCS#11 forbids `C_Finalize` while
   * other threads are inside the library (v2.40 §5.4 "C_Finalize").
   */
  run<T>(operation: () => Promise<T>): Promise<T>;
  /**
   * Finalise and initialise the library again, unless that already happened since `generation`
   * was observed. Used when the library was finalised underneath us (`CKR_CRYPTOKI_NOT_INITIALIZED`)
   * and when a token is missing: most libraries (SoftHSM among them) only enumerate tokens in
   * `C_Initialize`, so a returned token only becomes visible after a reinitialisation.
   */
  reinitialize(generation: number): Promise<void>;
  /**
   * Run `action` when no asynchronous native operation is in flight, holding new ones back until
   * it returns. For library-wide actions (`C_CloseAllSessions`, `C_Finalize`) that some libraries
   * do not survive while another thread is inside them: SoftHSM 2.6 crashes when a session is
   * closed under a running `C_Sign`.
   */
  exclusive<T>(action: () => T): Promise<T>;
  /** Give the lease back; the last lease finalises the library. Idempotent. */
  release(): void;
}

interface Entry {
  readonly path: string;
  readonly module: Module;
  users: number;
  initialized: boolean;
  generation: number;
  active: number;
  idleWaiters: Array<() => void>;
  /** Set while an exclusive action waits or runs; async operations wait for it. */
  gate: Promise<void> | null;
}

const registry = new Map<string, Entry>();

/**
 * Throw unless running on the main thread (see the module comment). `mainThread` is injectable for
 * tests.
 */
export function assertMainThread(mainThread: boolean = isMainThread): void {
  if (!mainThread) {
    throw optionError(
      'module',
      'PKCS#11 modules are only loaded on the main thread (a killed worker would take the HSM session with it); construct the signer in the server process and send it DER to sign',
    );
  }
}

/**
 * Initialise with `CKF_OS_LOCKING_OK`: the library may be called from libuv's thread pool (async
 * `C_Sign`) concurrently with the main thread, so it must use the OS's locking primitives.
 */
function initialize(entry: Entry): void {
  try {
    entry.module.initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (cause) {
    throw optionError('module', `${entry.path}: C_Initialize failed${reasonSuffix(cause)}`, cause);
  }
  entry.initialized = true;
  entry.generation++;
}

function finalize(entry: Entry): void {
  try {
    entry.module.finalize();
  } catch (error) {
    // Already finalised (by a reset or underneath us) is the state we want.
    if (ckrName(error) !== 'CKR_CRYPTOKI_NOT_INITIALIZED') throw error;
  }
  entry.initialized = false;
}

function waitIdle(entry: Entry): Promise<void> {
  if (entry.active === 0) return Promise.resolve();
  return new Promise((resolveIdle) => entry.idleWaiters.push(resolveIdle));
}

async function exclusive<T>(entry: Entry, action: () => T): Promise<T> {
  while (entry.gate) await entry.gate;
  let done!: () => void;
  entry.gate = new Promise<void>((resolve) => (done = resolve));
  try {
    await waitIdle(entry);
    return action();
  } finally {
    entry.gate = null;
    done();
  }
}

function leaseOf(entry: Entry): ModuleLease {
  let released = false;
  return {
    path: entry.path,
    module: entry.module,
    get generation() {
      return entry.generation;
    },
    async run<T>(operation: () => Promise<T>): Promise<T> {
      while (entry.gate) await entry.gate;
      entry.active++;
      try {
        return await operation();
      } finally {
        entry.active--;
        if (entry.active === 0) for (const waiter of entry.idleWaiters.splice(0)) waiter();
      }
    },
    async reinitialize(generation: number): Promise<void> {
      if (entry.gate) await entry.gate;
      if (entry.generation !== generation && entry.initialized) return;
      await exclusive(entry, () => {
        try {
          finalize(entry);
        } catch {
          // A library that cannot even finalise is reinitialised anyway; C_Initialize reports the truth.
        }
        initialize(entry);
      });
    },
    exclusive<T>(action: () => T): Promise<T> {
      return exclusive(entry, action);
    },
    release(): void {
      if (released) return;
      released = true;
      entry.users--;
      if (entry.users === 0 && entry.initialized) {
        // The library stays loaded (no dlclose): unloading and reloading a module in one process is
        // not reliable across vendors, and a later signer can simply initialise it again.
        try {
          finalize(entry);
        } catch {
          // Nothing useful to do when the library cannot finalise at shutdown.
        }
      }
    },
  };
}

/**
 * Borrow the PKCS#11 library at `modulePath`, loading and initialising it on first use. Throws a
 * 2000 error naming `options.module` when the file cannot be loaded or initialised.
 */
export function acquireModule(modulePath: string): ModuleLease {
  assertMainThread();
  const path = resolve(modulePath);
  let entry = registry.get(path);
  if (!entry) {
    let module: Module;
    try {
      module = Module.load(path);
    } catch (cause) {
      // dlopen's message names the file and the reason (no such file, wrong architecture…), never a secret.
      const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
      throw optionError('module', `cannot load PKCS#11 module ${path}: ${reason}`, cause);
    }
    entry = { path, module, users: 0, initialized: false, generation: 0, active: 0, idleWaiters: [], gate: null };
    registry.set(path, entry);
  }
  if (!entry.initialized) initialize(entry);
  entry.users++;
  return leaseOf(entry);
}

/** True when this process has the library at `modulePath` initialised (test helpers use it). */
export function isModuleInitialized(modulePath: string): boolean {
  return registry.get(resolve(modulePath))?.initialized === true;
}
