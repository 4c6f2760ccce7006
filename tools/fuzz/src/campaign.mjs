// @ts-check
/**
 * A fuzzing campaign: input #i is generated from (seed, i) alone — target, seed file and mutations —
 * run against its target, and its outcome tallied: accepted, refused with an allowed CFSSL code, or
 * a finding (any other throw, an unexplained disagreement with Node's X509Certificate, an input
 * slower than `slowMs`). Memory is sampled as it goes, so growth with hostile length fields shows.
 */
import { performance } from 'node:perf_hooks';
import { parseCertificate } from '@certsmith/x509-core';
import { mutateDer, toMutatedPem } from './mutators.mjs';
import { Random } from './random.mjs';
import { loadCorpus } from './seeds.mjs';
import { TARGETS, isExpectedRefusal } from './targets.mjs';

/** @typedef {import('./targets.mjs').Target} Target */

/**
 * Input #index of a campaign: its target and bytes or text. Deterministic.
 * @param {number} seed @param {number} index
 * @returns {{ target: Target, input: Uint8Array | string, seedName: string, verify: boolean }}
 */
export function generateInput(seed, index) {
  const corpus = loadCorpus();
  const random = new Random(seed, index);
  const target = /** @type {Target} */ (TARGETS[random.weighted(TARGETS.map((candidate) => candidate.weight))]);
  const kind = random.chance(0.9) ? random.pick(target.seeds) : random.pick(/** @type {const} */ (['certificate', 'csr', 'private-key', 'pkcs7']));
  const pool = corpus.seeds[kind];
  const chosen = random.pick(pool);
  const donor = random.pick(corpus.all);
  const der = mutateDer(random, chosen.der, donor.der);
  const input = target.input === 'pem' ? toMutatedPem(random, der, chosen.label) : der;
  return { target, input, seedName: chosen.name, verify: random.chance(0.1) };
}

/**
 * @typedef {object} Finding
 * @property {'failure' | 'disagreement' | 'slow'} kind
 * @property {string} target
 * @property {string} signature what went wrong, used to group findings
 * @property {number} count
 * @property {number} firstIndex reproduce with `run.mjs --seed S --replay firstIndex`
 * @property {string} seedName
 * @property {string} input base64 of the first input (up to 64 KiB), so a CI log alone reproduces it
 */

/**
 * @typedef {object} CampaignReport
 * @property {number} seed
 * @property {number} inputs
 * @property {number} milliseconds
 * @property {Record<string, { runs: number, accepted: number, refused: Record<string, number> }>} targets
 * @property {{ compared: number, nodeAccepted: number, explained: Record<string, number> }} node
 * @property {Finding[]} findings
 * @property {{ rssStartMb: number, rssMaxMb: number, heapMaxMb: number }} memory
 * @property {{ index: number, milliseconds: number, target: string }} slowest
 * @property {number} largestInput
 */

/**
 * @param {{ seed: number, inputs: number, startIndex?: number, slowMs?: number, progress?: (done: number) => void, progressEvery?: number, beforeInput?: (index: number) => void }} options
 * @returns {CampaignReport}
 */
export function runCampaign(options) {
  const { seed, inputs, startIndex = 0, slowMs = 2000, progress, progressEvery = 10_000, beforeInput } = options;
  const corpus = loadCorpus();
  const anyCertificate = parseCertificate(/** @type {import('./seeds.mjs').Seed} */ (corpus.seeds.certificate.at(-1)).der);
  /** @type {CampaignReport['targets']} */
  const targets = {};
  for (const target of TARGETS) targets[target.name] = { runs: 0, accepted: 0, refused: {} };
  /** @type {Map<string, Finding>} */
  const findings = new Map();
  const node = { compared: 0, nodeAccepted: 0, explained: /** @type {Record<string, number>} */ ({}) };
  const rssStart = process.memoryUsage().rss;
  let rssMax = rssStart;
  let heapMax = 0;
  let slowest = { index: -1, milliseconds: 0, target: '' };
  let largestInput = 0;
  const started = performance.now();

  /** @param {Finding['kind']} kind @param {string} target @param {string} signature @param {number} index @param {string} seedName */
  const find = (kind, target, signature, index, seedName) => {
    const key = `${kind}|${target}|${signature}`;
    const existing = findings.get(key);
    if (existing) {
      existing.count++;
      return;
    }
    const { input } = generateInput(seed, index);
    const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
    findings.set(key, { kind, target, signature, count: 1, firstIndex: index, seedName, input: bytes.subarray(0, 65536).toString('base64') });
  };

  for (let index = startIndex; index < startIndex + inputs; index++) {
    beforeInput?.(index);
    const { target, input, seedName, verify } = generateInput(seed, index);
    largestInput = Math.max(largestInput, input.length);
    const tally = /** @type {CampaignReport['targets'][string]} */ (targets[target.name]);
    tally.runs++;
    const before = performance.now();
    /** @type {import('./targets.mjs').RunContext} */
    const context = { anyCertificate, compareWithNode: true, verify, agreement: null };
    try {
      target.run(input, context);
      tally.accepted++;
      recordAgreement(context.agreement);
    } catch (error) {
      if (isExpectedRefusal(target, error)) {
        const code = String(/** @type {{ code?: number }} */ (error).code ?? 'DerDecodeError');
        tally.refused[code] = (tally.refused[code] ?? 0) + 1;
        recordAgreement(context.agreement);
      } else {
        const described = error instanceof Error ? `${error.name}${'code' in error ? ` ${String(error.code)}` : ''}: ${error.message.slice(0, 160)}` : String(error);
        find('failure', target.name, described, index, seedName);
      }
    }
    const elapsed = performance.now() - before;
    if (elapsed > slowest.milliseconds) slowest = { index, milliseconds: elapsed, target: target.name };
    if (elapsed > slowMs) find('slow', target.name, `took ${Math.round(elapsed)} ms`, index, seedName);

    /** @param {import('./node-agreement.mjs').AgreementResult | null} agreement */
    function recordAgreement(agreement) {
      if (agreement === null) return;
      node.compared++;
      if (agreement.nodeAccepts) node.nodeAccepted++;
      for (const id of new Set(agreement.explained)) node.explained[id] = (node.explained[id] ?? 0) + 1;
      for (const disagreement of agreement.unexplained) {
        find('disagreement', target.name, `${disagreement.field}: ours ${JSON.stringify(disagreement.ours)?.slice(0, 120)} vs node ${JSON.stringify(disagreement.node)?.slice(0, 120)}`, index, seedName);
      }
    }

    if ((index - startIndex + 1) % 1000 === 0) {
      const memory = process.memoryUsage();
      rssMax = Math.max(rssMax, memory.rss);
      heapMax = Math.max(heapMax, memory.heapUsed);
    }
    if (progress && (index - startIndex + 1) % progressEvery === 0) progress(index - startIndex + 1);
  }
  return {
    seed,
    inputs,
    milliseconds: Math.round(performance.now() - started),
    targets,
    node,
    findings: [...findings.values()],
    memory: { rssStartMb: Math.round(rssStart / 2 ** 20), rssMaxMb: Math.round(rssMax / 2 ** 20), heapMaxMb: Math.round(heapMax / 2 ** 20) },
    slowest: { ...slowest, milliseconds: Math.round(slowest.milliseconds * 10) / 10 },
    largestInput,
  };
}

/**
 * Run input #index alone and describe it (for reproducing a finding).
 * @param {number} seed @param {number} index
 */
export function replayInput(seed, index) {
  const { target, input, seedName, verify } = generateInput(seed, index);
  const corpus = loadCorpus();
  const anyCertificate = parseCertificate(/** @type {import('./seeds.mjs').Seed} */ (corpus.seeds.certificate.at(-1)).der);
  /** @type {import('./targets.mjs').RunContext} */
  const context = { anyCertificate, compareWithNode: true, verify, agreement: null };
  let outcome;
  try {
    target.run(input, context);
    outcome = 'accepted';
  } catch (error) {
    outcome = isExpectedRefusal(target, error) ? `refused as allowed: ${String(error)}` : `FINDING: ${error instanceof Error ? error.stack : String(error)}`;
    const cause = /** @type {{ cause?: unknown }} */ (error).cause;
    if (cause instanceof Error) outcome += `\n  cause: ${cause.message}`;
  }
  return { target: target.name, seedName, input, outcome, agreement: context.agreement };
}
