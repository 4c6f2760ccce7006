/**
 * Label routing: which signer (and which signing policy) serves a request. A request without
 * `label` uses the signer labelled `default`; a request with a label uses the signer of that label;
 * a label nobody configured is forwarded when the default signer is a remote multi-root CA that
 * forwards labels (CFSSL's remote signer sends `label` on, multirootca picks the root by it,
 * behaviour doc 3.1 step 6, 4.6), and refused with {@link UnknownLabelError} otherwise (CFSSL's
 * local signer silently ignores the label; certsmith does not).
 *
 * The directory is the port the issuing use case routes through; `apps/server` fills it from the
 * config file's `signers` section and `--ca`/`--ca-key`, the CLI from its signing flags.
 */
import type { Signer } from '@certsmith/signer-api';
import { UnknownLabelError } from './errors.js';
import type { SigningPolicy } from './signing-policy.js';

/**
 * How a worker thread makes its own copy of a signer (plugins with `meta.recreatableInWorkers`:
 * a key held in memory). Plain data: it crosses threads.
 */
export interface WorkerSignerRecipe {
  /** URL (or specifier) of the plugin module, importable from a worker; its default export is the plugin. */
  readonly module: string;
  /** The plugin options as configured (validated again by the worker, as at start-up). */
  readonly options: unknown;
  /** Folder relative paths and `file:` secrets in the options resolve against. */
  readonly configDir: string;
  /**
   * Environment for `env:` references when the host resolved them from something other than
   * `process.env` (tests); absent, the worker's own copy of the environment is used.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The label of the signer that serves requests without a label. */
export const DEFAULT_LABEL = 'default';

/** One configured signer. */
export interface SignerEntry {
  /** Label that selects it (`default` for requests without a label). */
  readonly label: string;
  readonly signer: Signer;
  /** The CFSSL signing policy (profiles, auth keys) requests for this label are checked against. */
  readonly policy: SigningPolicy;
  /**
   * True for a remote signer without a fixed label: it passes the request's `label` on to the
   * remote CA, which picks its root by it. Only the `default` entry's flag matters for routing
   * labels nobody configured.
   */
  readonly forwardsLabels?: boolean;
  /** Name of the plugin that created the signer, for logs and health. */
  readonly pluginName?: string;
  /**
   * How worker threads make their own copy of this signer (plugins with
   * `meta.recreatableInWorkers`). With the issuer's `signatureSite: 'worker'` (and the pool given
   * `issuingWorkerInits`), newcert issues the whole certificate in a worker.
   */
  readonly workerRecipe?: WorkerSignerRecipe;
  /**
   * Told about signatures made by the worker copy (the main-thread signer never sees them), so the
   * signer metrics still count them. Set by the metrics wrapper.
   */
  readonly observeWorkerSign?: (seconds: number, ok: boolean) => void;
}

/** The signer chosen for one request. */
export interface SignerRoute {
  /** The configured label that serves the request (`default` when the label is forwarded). */
  readonly label: string;
  readonly signer: Signer;
  readonly policy: SigningPolicy;
  /**
   * The label to hand to a whole-request signer (`signRequest`, `info`): the request's own label,
   * `''` when it had none. Local signers ignore it.
   */
  readonly forwardLabel: string;
  /** True when the label was not configured here and goes on to the remote CA of `default`. */
  readonly forwarded: boolean;
  /** The entry's {@link SignerEntry.workerRecipe} (never for a forwarded label). */
  readonly workerRecipe?: WorkerSignerRecipe | undefined;
  /** The entry's {@link SignerEntry.observeWorkerSign}. */
  readonly observeWorkerSign?: ((seconds: number, ok: boolean) => void) | undefined;
}

/** Chooses signers by label. */
export interface SignerDirectory {
  /**
   * The route for `label` (`undefined` or `''` → `default`).
   * @throws UnknownLabelError (5200) when nothing serves the label
   */
  route(label: string | undefined): SignerRoute;
  /** Every configured entry, in configuration order. */
  readonly entries: readonly SignerEntry[];
}

/**
 * Build a directory over `entries` (labels must be unique; one should be `default`, else requests
 * without a label fail with {@link UnknownLabelError}).
 */
export function createSignerDirectory(entries: readonly SignerEntry[]): SignerDirectory {
  const byLabel = new Map<string, SignerEntry>();
  for (const entry of entries) {
    if (byLabel.has(entry.label)) throw new TypeError(`two signers are labelled ${JSON.stringify(entry.label)}`);
    byLabel.set(entry.label, entry);
  }
  const fallback = byLabel.get(DEFAULT_LABEL);
  return {
    entries: [...entries],
    route(label) {
      const requested = label ?? '';
      const entry = byLabel.get(requested === '' ? DEFAULT_LABEL : requested);
      if (entry !== undefined) {
        return {
          label: entry.label,
          signer: entry.signer,
          policy: entry.policy,
          forwardLabel: requested,
          forwarded: false,
          workerRecipe: entry.workerRecipe,
          observeWorkerSign: entry.observeWorkerSign,
        };
      }
      if (fallback?.forwardsLabels === true) {
        return { label: fallback.label, signer: fallback.signer, policy: fallback.policy, forwardLabel: requested, forwarded: true };
      }
      throw new UnknownLabelError(requested);
    },
  };
}
