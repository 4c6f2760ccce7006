// @ts-check
/**
 * The campaign in a child process (see run.mjs): a hang or a crash of the whole process — a native
 * assertion in Node's crypto aborts it — still leaves the parent knowing which input was running,
 * because each input's index is written to file descriptor 3 before it runs.
 */
import { writeSync } from 'node:fs';
import { runCampaign } from './campaign.mjs';

const { seed, inputs, startIndex, slowMs } = JSON.parse(process.env.CERTSMITH_FUZZ_CAMPAIGN ?? '{}');
const position = Buffer.alloc(4);
const report = runCampaign({
  seed,
  inputs,
  startIndex,
  slowMs,
  beforeInput: (index) => {
    position.writeInt32LE(index, 0);
    writeSync(3, position);
  },
  progress: (done) => process.send?.({ type: 'progress', done }),
  progressEvery: 10_000,
});
process.send?.({ type: 'report', report }, () => process.disconnect());
