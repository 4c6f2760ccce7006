import { defineConfig } from 'vitest/config';

/** One root command (`npx vitest run`) runs the tests of every workspace project and the e2e suite. */
export default defineConfig({
  test: {
    projects: ['packages/*', 'plugins/*', 'apps/*', 'tools/test-pki', 'tools/fuzz', 'test'],
  },
});
