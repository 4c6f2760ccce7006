/**
 * The server variants that `variants.mjs` and `first-seconds.mjs` compare, named on the command line
 * as `name[@checkout][:ENV=value,ENV2=value][;certsmith serve flags]`; a name starting with `cfssl`
 * starts Debian's `cfssl serve` instead of certsmith. A flag `--node-arg=X` is given to node, not to
 * `certsmith serve` (e.g. `;--node-arg=--interrupt-budget=67584`).
 */
import { resolve } from 'node:path';
import { startServer } from './servers.mjs';

const NODE_ARG = '--node-arg=';

/**
 * @typedef {object} VariantSpec
 * @property {string} name
 * @property {string} checkout   the repository whose build runs (default: this one)
 * @property {Record<string, string>} env   environment the server gets on top of this one's
 * @property {string[]} flags    extra `certsmith serve` flags
 * @property {string[]} nodeArgs extra `node` flags
 * @property {'certsmith' | 'cfssl'} kind
 */

/**
 * Parse one variant.
 * @param {string} spec
 * @param {string} defaultCheckout
 * @returns {VariantSpec}
 */
export function parseVariant(spec, defaultCheckout) {
  const [head, flagPart = ''] = spec.split(';');
  const [nameAndCheckout, envPart = ''] = head.split(':');
  const [name, checkout = defaultCheckout] = nameAndCheckout.split('@');
  const env = Object.fromEntries(
    envPart
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('=')),
  );
  const words = flagPart.split(/\s+/).filter(Boolean);
  const nodeArgs = words.filter((word) => word.startsWith(NODE_ARG)).map((word) => word.slice(NODE_ARG.length));
  const flags = words.filter((word) => !word.startsWith(NODE_ARG));
  return { name, checkout: resolve(checkout), env, flags, nodeArgs, kind: name.startsWith('cfssl') ? 'cfssl' : 'certsmith' };
}

/**
 * Start a variant's server on the given files (servers.mjs `startServer`), with its environment.
 * @param {VariantSpec} variant
 * @param {{ files: import('./servers.mjs').ServerFiles, workDir: string, extraArgs?: string[] }} options
 */
export async function startVariant(variant, { files, workDir, extraArgs = [] }) {
  // The child inherits the environment at spawn time.
  const saved = { ...process.env };
  Object.assign(process.env, variant.env);
  try {
    return await startServer({
      kind: variant.kind,
      files,
      workDir,
      repoRoot: variant.checkout,
      label: variant.name,
      nodeArgs: variant.kind === 'certsmith' ? variant.nodeArgs : [],
      extraArgs: variant.kind === 'certsmith' ? [...extraArgs, ...variant.flags] : [],
    });
  } finally {
    process.env = saved;
  }
}
