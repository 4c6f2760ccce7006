import { defineProject, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

/**
 * The shared config resolves with the `import` condition, which vitest also hands to Node; Node
 * then applies it to `require()` too, and node-postgres' `require('pg-pool')` would get pg-pool's
 * ES module wrapper instead of its class. Node adds `import`/`require` by itself, so this project
 * leaves them out.
 */
const conditions = ['@certsmith/source', 'node', 'default'];
const config = mergeConfig(shared, defineProject({ test: { name: '@certsmith/cert-store' } }));
config.resolve = { ...config.resolve, conditions };
config.ssr = { ...config.ssr, resolve: { ...config.ssr?.resolve, conditions } };

export default config;
