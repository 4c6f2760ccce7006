import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings for every project. The `@certsmith/source` export condition makes
 * workspace packages resolve to their TypeScript sources, so unit tests run without a build;
 * end-to-end tests start the built server (`npm test` builds first).
 *
 * No `import`/`module` here: vitest hands these conditions to Node too, and Node then applies them
 * to `require()` calls inside CommonJS packages — node-postgres' `require('pg-pool')` got pg-pool's
 * ES module wrapper instead of its class. Node and Vite add `import`/`require` per call by themselves.
 */
const sourceConditions = ['@certsmith/source', 'node', 'default'];

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
