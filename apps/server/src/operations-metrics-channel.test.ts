/**
 * The bundle endpoint, the issue operations' bundler and the start-up warm-up must hand the workers
 * the very same bundle context config — metrics channel included — or each worker would load the
 * trust files once per config (memoised by config) and count AIA fetches into nowhere.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleContextConfig } from '@certsmith/bundler';
import type { BundleTaskInput, OperationContext } from '@certsmith/http-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOperations, issueBundlerConfig } from './operations.js';
import { resolveServerOptions } from './server-options.js';

describe('the metrics channel in the bundle context config', () => {
  // Only checked for readability here: the workers load them, and no worker runs in this test.
  let dir: string;
  const trust = () => ({ caBundleFile: join(dir, 'ca.pem'), intBundleFile: join(dir, 'int.pem'), workers: 1 });
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certsmith-channel-'));
    await Promise.all([writeFile(join(dir, 'ca.pem'), ''), writeFile(join(dir, 'int.pem'), '')]);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is the same in the bundle endpoint, the issue bundler and the warm-up config', async () => {
    const options = await resolveServerOptions({ ...trust(), allowPrivateNetworks: true });
    const channel = 'certsmith.worker-metrics.test';
    const bundle = (await buildOperations(options, { metricsChannel: channel })).find((operation) => operation.name === 'bundle');
    let sent: BundleTaskInput | undefined;
    const context = {
      runTask: async (_task: unknown, input: BundleTaskInput) => {
        sent = input;
        return {};
      },
    } as unknown as OperationContext;
    await bundle!.handle({ certificate: 'x' } as never, context);

    const warmUp = bundleContextConfig({ ...options, metricsChannel: channel });
    expect(sent?.context).toEqual(warmUp);
    expect(sent?.context.metricsChannel).toBe(channel);
    expect(JSON.stringify(issueBundlerConfig(options, channel))).toBe(JSON.stringify(warmUp));
  });

  it('is absent when the server has no metrics channel (embedding without metrics)', async () => {
    const options = await resolveServerOptions(trust());
    expect(issueBundlerConfig(options)).not.toHaveProperty('metricsChannel');
  });
});
