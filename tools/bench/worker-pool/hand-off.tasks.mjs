/**
 * The bench's tasks as `@certsmith/worker-pool` task definitions (the `pool` variant of
 * `hand-off.bench.mjs`): the same work as `hand-off.worker.mjs`.
 */
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { defineTask } from '@certsmith/worker-pool';

let key;
function signingKey() {
  if (key === undefined) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    key = createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));
  }
  return key;
}

export const echoTask = defineTask({ name: 'bench.echo', module: import.meta.url, run: (input) => input });

export const signTask = defineTask({
  name: 'bench.sign',
  module: import.meta.url,
  run: (input) => ({ signature: sign('sha256', Buffer.from(input.tbs), signingKey()).toString('base64'), id: input.id }),
});
