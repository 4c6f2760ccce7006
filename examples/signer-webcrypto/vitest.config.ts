import { defineConfig } from 'vitest/config';

// A third-party plugin's own suite: no certsmith-internal resolve conditions, so
// @certsmith/signer-api and @certsmith/signer-testkit load from their published dist/.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
