/**
 * Signers that worker threads recreate for themselves, so a local-key CA issues whole certificates
 * (key, CSR, certificate, signature, digests) in one worker task instead of bouncing the signature
 * back to the main thread. Only plugins that declare `meta.recreatableInWorkers` (a key held in
 * memory, e.g. `@certsmith/signer-local`) qualify: an HSM session or a remote connection pool
 * belongs to the main thread and stays there.
 *
 * Main thread: {@link workerSignersInit} turns the configured entries into the pool's init hook for
 * this module (plugin module URL, options, config folder, and the label's signing policy — cloned
 * once per worker at start, not per request: docs/performance.md#signing-policies-cloned-once-per-worker). Worker:
 * {@link initWorker} keeps that data and {@link workerSigning} creates the signer from it on first
 * use and keeps it.
 */
import { performance } from 'node:perf_hooks';
import { createSigner, createSignerContext } from '@certsmith/signer-api';
import type { SignatureAlgorithm, Signer } from '@certsmith/signer-api';
import { resolveBuiltModule } from '@certsmith/worker-pool';
import type { WorkerInit } from '@certsmith/worker-pool';

import { issueCertificate } from './certificate-template.js';
import type { CsrFacts, SignOverrides } from './certificate-template.js';
import { getIssuerContext } from './issuer-context.js';
import type { IssuerContext } from './issuer-context.js';
import type { SignerEntry, WorkerSignerRecipe } from './signer-directory.js';
import { selectProfile } from './signing-policy.js';
import type { SigningPolicy } from './signing-policy.js';
import { runWorkerIssuedHook } from './worker-issued-hook.js';

/** One label a worker can issue for. */
export interface WorkerSignerSpec {
  readonly label: string;
  readonly recipe: WorkerSignerRecipe;
  /** The label's signing policy (the main thread's, cloned). */
  readonly policy: SigningPolicy;
}

/** The worker-side signer of a label, with what the issuer derived from its CA certificate. */
export interface WorkerSigning {
  readonly signer: Signer;
  readonly context: IssuerContext;
  readonly policy: SigningPolicy;
}

/** Worker specs for every entry that has a recipe (the data of {@link workerSignersInit}). */
export function workerSignerSpecs(entries: readonly SignerEntry[]): WorkerSignerSpec[] {
  const specs: WorkerSignerSpec[] = [];
  for (const entry of entries) {
    if (entry.workerRecipe === undefined) continue;
    // Workers run built JavaScript: a plugin resolved to its TypeScript source (vitest) maps to dist.
    specs.push({ label: entry.label, recipe: { ...entry.workerRecipe, module: resolveBuiltModule(entry.workerRecipe.module) }, policy: entry.policy });
  }
  return specs;
}

/**
 * The pool's init hook that gives every thread running tasks the signers of `entries` it can
 * recreate (see {@link initWorker}); null when none can be.
 */
export function workerSignersInit(entries: readonly SignerEntry[]): WorkerInit | null {
  const specs = workerSignerSpecs(entries);
  // With its own initWorker: a thread that holds this module already calls it (WorkerInit.initWorker).
  return specs.length > 0 ? { module: import.meta.url, data: specs, initWorker } : null;
}

/** The init hook (see {@link workerSignersInit}): this thread's signer specs. */
export function initWorker(data: unknown): void {
  provideWorkerSigners(data as readonly WorkerSignerSpec[]);
}

let providedSpecs: readonly WorkerSignerSpec[] | null = null;
const signings = new Map<string, Promise<WorkerSigning>>();

/**
 * Give this thread its specs: what the init hook does in a worker; tests and single-threaded
 * embedding (tasks run inline) call it directly. Forgets signers made from earlier specs.
 */
export function provideWorkerSigners(specs: readonly WorkerSignerSpec[] | null): void {
  providedSpecs = specs;
  const previous = [...signings.values()];
  signings.clear();
  for (const signing of previous) signing.then((made) => made.signer.close()).catch(() => undefined);
}

/**
 * The signer of `label` in this thread, made on first use from its spec. A failure is not kept, so
 * a file that could not be read is retried by the next request.
 */
export function workerSigning(label: string): Promise<WorkerSigning> {
  let signing = signings.get(label);
  if (signing === undefined) {
    signing = makeSigning(label);
    signings.set(label, signing);
    signing.catch(() => {
      if (signings.get(label) === signing) signings.delete(label);
    });
  }
  return signing;
}

async function makeSigning(label: string): Promise<WorkerSigning> {
  const specs = providedSpecs ?? [];
  const spec = specs.find((candidate) => candidate.label === label);
  // The main thread only sends labels it gave the pool a spec for; anything else is a wiring bug.
  if (spec === undefined) throw new Error(`worker has no signer for label "${label}"`);
  const context = createSignerContext({ configDir: spec.recipe.configDir, ...(spec.recipe.env ? { env: spec.recipe.env } : {}) });
  const signer = await createSigner(await import(spec.recipe.module), spec.recipe.options, context);
  return { signer, context: await getIssuerContext(signer), policy: spec.policy };
}

/** `signer` whose `sign` records its duration in `timing` (one request's signature). */
export function timedSigner(signer: Signer, timing: { seconds: number }): Signer {
  const sign = signer.sign;
  if (sign === undefined) return signer;
  return {
    ...signer,
    async sign(tbs: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
      const started = performance.now();
      try {
        return await sign.call(signer, tbs, algorithm);
      } finally {
        timing.seconds = (performance.now() - started) / 1000;
      }
    },
  };
}

/** A certificate issued by this thread's copy of a signer. */
export interface IssuedInWorker {
  pem: string;
  der: Uint8Array;
  /** Time the one CA signature took, for the signer metrics of the main thread. */
  signSeconds: number;
  /** What this thread's issued hook gave for the certificate (`worker-issued-hook.ts`); absent without a hook. */
  attachment?: unknown;
  /** Times of the signatures the hook made with the signer (counted in the signer metrics too). */
  hookSignSeconds?: readonly number[];
}

/**
 * Issue a certificate for `facts` under profile `profileName` (`''` → default) with this thread's
 * copy of the signer of `label`: the step newcert and sign share once their CSR facts are known.
 */
export async function issueWithWorkerSigner(label: string, profileName: string, facts: CsrFacts, overrides: SignOverrides = {}): Promise<IssuedInWorker> {
  const signing = await workerSigning(label);
  const profile = selectProfile(signing.policy, profileName);
  const timing = { seconds: 0 };
  const context = { ...signing.context, signer: timedSigner(signing.signer, timing) };
  const issued = await issueCertificate(context, signing.policy, profile, facts, overrides);
  const hooked = await runWorkerIssuedHook({ label, certificateDer: issued.der, certificatePem: issued.pem, signer: signing.signer });
  if (hooked === null) return { pem: issued.pem, der: issued.der, signSeconds: timing.seconds };
  return { pem: issued.pem, der: issued.der, signSeconds: timing.seconds, attachment: hooked.attachment, hookSignSeconds: hooked.signSeconds };
}
