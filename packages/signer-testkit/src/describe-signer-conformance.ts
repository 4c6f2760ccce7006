/**
 * The vitest face of the conformance suite: a plugin author calls {@link describeSignerConformance}
 * at the top level of a test file and gets one `describe` per contract call, with the same tests
 * certsmith's own signers pass (typescript-eslint's published RuleTester is the model: the
 * harness registers the tests, the author only supplies the subject).
 */
import { afterAll, describe, it } from 'vitest';

import type { ConformanceCase, LazyValue, SignerConformanceSettings } from './conformance-plan.js';
import { planSignerConformance } from './conformance-plan.js';

/**
 * Register the signer conformance suite for `plugin` in the current vitest file.
 *
 * ```ts
 * import { describeSignerConformance } from '@certsmith/signer-testkit';
 * import plugin from '../src/index.js';
 *
 * describeSignerConformance(plugin, () => ({ keyFile: join(dir, 'ca-key.jwk'), certFile: join(dir, 'ca.pem') }));
 * ```
 *
 * @param plugin the plugin (`defineSigner` result), its module namespace, or a promise of either
 * @param options valid options for the plugin, or a function returning them when the suite runs
 *   (after the file's own `beforeAll`, so it may use a temporary directory made there)
 * @param settings context, extra invalid options, issuance request, timeouts
 */
export function describeSignerConformance<Options>(plugin: unknown, options: LazyValue<Options>, settings: SignerConformanceSettings<Options> = {}): void {
  const plan = planSignerConformance(plugin, options, settings);
  const groups = new Map<string, ConformanceCase[]>();
  for (const entry of plan.cases) {
    const group = groups.get(entry.group) ?? [];
    group.push(entry);
    groups.set(entry.group, group);
  }
  describe(plan.title, () => {
    afterAll(() => plan.teardown());
    for (const [group, entries] of groups) {
      describe(group, () => {
        for (const entry of entries) {
          it(
            entry.title,
            async (context) => {
              const outcome = await entry.run();
              if (outcome) context.skip(outcome.skipped);
            },
            settings.timeoutMs,
          );
        }
      });
    }
  });
}
