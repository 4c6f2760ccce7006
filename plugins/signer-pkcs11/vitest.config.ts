import { defineProject, mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

// `forks`, never `threads`: the plugin refuses to load a PKCS#11 module off the main thread, and
// each test file needs its own process because SoftHSM reads SOFTHSM2_CONF once per initialisation.
export default mergeConfig(shared, defineProject({ test: { name: '@certsmith/signer-pkcs11', pool: 'forks' } }));
