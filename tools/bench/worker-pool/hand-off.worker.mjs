/**
 * Worker side of `hand-off.bench.mjs`: runs a batch of tasks and answers with their outcomes. Under
 * Piscina the default export is the task function (a batch is one Piscina task); as a plain
 * `node:worker_threads` worker (`workerData.raw`) it answers batches posted on `parentPort`.
 */
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const key = createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));

/** The tasks: `echo` (the hand-off alone) and `sign` (one ECDSA P-256 signature, ≈ a third of a newcert's crypto). */
const TASKS = {
  echo: (input) => input,
  sign: (input) => ({ signature: sign('sha256', Buffer.from(input.tbs), key).toString('base64'), id: input.id }),
};

function runOne(request) {
  try {
    return { ok: true, result: TASKS[request.task](request.input) };
  } catch (error) {
    return { ok: false, error: { message: String(error) } };
  }
}

/** Piscina entry: a batch of tasks is one Piscina task. */
export default function runBatch(batch) {
  return batch.map(runOne);
}

export async function initWorker() {}

/** Pool entry (`@certsmith/worker-pool` task definitions), for the certsmith pool variant. */
export const benchTasks = TASKS;

if (workerData?.raw) {
  parentPort.on('message', ({ id, batch }) => parentPort.postMessage({ id, outcomes: batch.map(runOne) }));
}
