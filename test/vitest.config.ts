import { defineProject, mergeConfig } from 'vitest/config';
import shared from '../vitest.shared.ts';

/**
 * End-to-end tests: real server processes, real peers (cfssl, multirootca, SoftHSM) on 127.0.0.1.
 * Run one file at a time: they spawn servers and the machine has two cores.
 */
export default mergeConfig(
  shared,
  defineProject({
    test: {
      name: 'e2e',
      include: ['**/*.test.ts'],
      fileParallelism: false,
      testTimeout: 120_000,
      hookTimeout: 180_000,
    },
  }),
);
