import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings for every project. The `@certsmith/source` export condition makes
 * workspace packages resolve to their TypeScript sources, so unit tests run without a build;
 * end-to-end tests start the built server (`npm test` builds first).
 */
const sourceConditions = ['@certsmith/source', 'import', 'module', 'node', 'default'];

export default defineConfig({
  resolve: { conditions: sourceConditions },
  ssr: { resolve: { conditions: sourceConditions, externalConditions: ['@certsmith/source'] } },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts', '*.test.ts', '**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
