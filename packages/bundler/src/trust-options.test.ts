import { describe, expect, it } from 'vitest';
import { bundleContextConfig } from './trust-options.js';

describe('bundleContextConfig', () => {
  it('uses the embedded default (Node\'s roots as one platform) when neither roots nor metadata are given', () => {
    expect(bundleContextConfig({})).toEqual({ embeddedPlatforms: true });
    expect(bundleContextConfig({ intBundleFile: '/i.pem' })).toEqual({ intBundleFile: '/i.pem', embeddedPlatforms: true });
  });

  it('has no platforms with a ca-bundle but no metadata, as cfssl serve', () => {
    expect(bundleContextConfig({ caBundleFile: '/ca.pem' })).toEqual({ caBundleFile: '/ca.pem' });
  });

  it('passes the trust files and AIA bounds through as plain data', () => {
    const config = bundleContextConfig({
      caBundleFile: '/ca.pem',
      intBundleFile: '/int.pem',
      metadataFile: '/meta.json',
      aia: { timeoutMs: 1000 },
    });
    expect(config).toEqual({ caBundleFile: '/ca.pem', intBundleFile: '/int.pem', metadataFile: '/meta.json', aia: { timeoutMs: 1000 } });
    expect(structuredClone(config)).toEqual(config);
  });

  it('adds the network allowance only when private networks or CIDRs are allowed', () => {
    expect(bundleContextConfig({ allowPrivateNetworks: false, allowCidrs: [] })).toEqual({ embeddedPlatforms: true });
    expect(bundleContextConfig({ allowPrivateNetworks: true })).toEqual({
      embeddedPlatforms: true,
      network: { allowPrivateNetworks: true, allowCidrs: [] },
    });
    expect(bundleContextConfig({ allowCidrs: ['127.0.0.0/8'] }).network).toEqual({
      allowPrivateNetworks: false,
      allowCidrs: ['127.0.0.0/8'],
    });
  });

  it('carries the metrics channel the workers report AIA counts on, only when given', () => {
    expect(bundleContextConfig({ caBundleFile: '/ca.pem', metricsChannel: 'certsmith.worker-metrics.x' })).toEqual({ caBundleFile: '/ca.pem', metricsChannel: 'certsmith.worker-metrics.x' });
    expect(bundleContextConfig({ caBundleFile: '/ca.pem', metricsChannel: undefined })).toEqual({ caBundleFile: '/ca.pem' });
  });

  it('ignores unrelated options (the server passes its whole options object)', () => {
    const serverOptions = { address: '127.0.0.1', port: 0, caBundleFile: '/ca.pem', metadataFile: undefined };
    expect(bundleContextConfig(serverOptions)).toEqual({ caBundleFile: '/ca.pem' });
  });
});
