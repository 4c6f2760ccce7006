import { describe, expect, it } from 'vitest';
import { bundleContextKey, loadBundleContext } from './bundle-context.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** cfssl_trust data, used in place: the `shared/` folder beside the repository (CI), or /work/shared. */
const TRUST = [process.env.CERTSMITH_TRUST_DIR, fileURLToPath(new URL('../../../../shared/trust', import.meta.url)), '/work/shared/trust'].find(
  (dir): dir is string => typeof dir === 'string' && existsSync(dir),
) as string;


describe('loadBundleContext', () => {
  it('loads pools and platforms once and shares them when called again', async () => {
    const config = { caBundleFile: `${TRUST}/ca-bundle.crt`, intBundleFile: `${TRUST}/int-bundle.crt`, metadataFile: `${TRUST}/ca-bundle.crt.metadata`, aia: false as const };
    const first = loadBundleContext(config);
    expect(loadBundleContext({ ...config })).toBe(first);
    expect(loadBundleContext(structuredClone(config), undefined, bundleContextKey(config))).toBe(first);
    const context = await first;
    expect(context.pools.roots.size).toBeGreaterThan(300);
    expect(context.pools.intermediates.size).toBe(1263);
    expect(context.platforms).toHaveLength(15);
    expect(context.aia).toBeNull();
  });

  it('falls back to Node\'s roots and no platforms when nothing is configured', async () => {
    const context = await loadBundleContext({ aia: { timeoutMs: 1000 } });
    expect(context.pools.roots.size).toBeGreaterThan(100);
    expect(context.pools.intermediates.size).toBe(0);
    expect(context.platforms).toEqual([]);
    expect(context.aia).not.toBeNull();
    await context.aia?.close();
  });

  it('fails with 4001 / 3001 when a bundle file is missing and retries on the next call', async () => {
    await expect(loadBundleContext({ caBundleFile: '/nonexistent/ca.pem', aia: false })).rejects.toMatchObject({ code: 4001 });
    await expect(loadBundleContext({ intBundleFile: '/nonexistent/int.pem', aia: false })).rejects.toMatchObject({ code: 3001 });
    await expect(loadBundleContext({ caBundleFile: '/nonexistent/ca.pem', aia: false })).rejects.toMatchObject({ code: 4001 });
  });
});
