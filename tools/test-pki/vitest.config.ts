import { defineProject, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

/** Not part of the root project list (tools/ are not test projects); run with `npx vitest run --root tools/test-pki`. */
export default mergeConfig(shared, defineProject({ test: { name: '@certsmith/test-pki' } }));
