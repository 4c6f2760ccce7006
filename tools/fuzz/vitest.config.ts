import { defineProject, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

/** The bounded, seeded fuzz sample CI runs (`tools/fuzz/README.md`; the by-hand run is `node tools/fuzz/run.mjs`). */
export default mergeConfig(shared, defineProject({ test: { name: 'fuzz', testTimeout: 180_000 } }));
