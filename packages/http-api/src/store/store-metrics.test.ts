import { StoreUnavailableError } from '@certsmith/cert-store';
import type { CertificateCount, ExpiringCount } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { watchCertificateStore } from './store-metrics.js';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const ca = pki.root({ CN: 'metrics root' }, { key: 'ecdsa-p256', notAfter: new Date('2027-01-01T00:00:00Z') });
const now = new Date('2026-12-31T00:00:00Z');

/** A store whose counts are given, counting how often it is asked. */
function countingStore(counts: CertificateCount[], expiring: ExpiringCount[]) {
  const state = { calls: 0, down: false };
  return {
    state,
    store: {
      countCertificates: async () => {
        state.calls += 1;
        if (state.down) throw new StoreUnavailableError('down');
        return counts;
      },
      countExpiring: async () => expiring,
    },
  };
}

const signers = [
  { label: 'default', signer: { getCertificate: async () => ({ der: ca.der, pem: ca.pem }) } },
  { label: 'hsm', signer: { getCertificate: () => Promise.reject(new Error('no session')) } },
];

describe('watchCertificateStore', () => {
  it('exports counts by label and status, bounding labels and statuses it does not know', async () => {
    const registry = new Registry();
    const { store } = countingStore(
      [
        { label: 'default', status: 'good', count: 5 },
        { label: 'default', status: 'revoked', count: 1 },
        { label: 'imported-1', status: 'good', count: 2 },
        { label: 'imported-2', status: 'good', count: 3 },
        { label: '', status: 'weird', count: 4 },
      ],
      [{ label: 'default', count: 2 }, { label: 'imported-1', count: 1 }],
    );
    watchCertificateStore(registry, { store, signers, now: () => now });
    const text = await registry.metrics();
    expect(text).toContain('certsmith_certificates{label="default",status="good"} 5');
    expect(text).toContain('certsmith_certificates{label="default",status="revoked"} 1');
    expect(text).toContain('certsmith_certificates{label="(other)",status="good"} 5');
    expect(text).toContain('certsmith_certificates{label="",status="(other)"} 4');
    expect(text).toContain('certsmith_certificates_expiring_30d{label="default"} 2');
    expect(text).toContain('certsmith_certificates_expiring_30d{label="(other)"} 1');
    expect(text).toContain('certsmith_certificates_expiring_30d{label="hsm"} 0');
    expect(text).toContain('certsmith_certificate_store_up 1');
    // One day left; a signer whose certificate cannot be had is left out.
    expect(text).toContain('certsmith_ca_certificate_expiry_seconds{label="default"} 86400');
    expect(text).not.toContain('certsmith_ca_certificate_expiry_seconds{label="hsm"}');
  });

  it('asks the store at most once per refresh interval, however many scrapes', async () => {
    const registry = new Registry();
    const { store, state } = countingStore([{ label: 'default', status: 'good', count: 1 }], []);
    watchCertificateStore(registry, { store, signers: [], countRefreshMs: 60_000 });
    await Promise.all([registry.metrics(), registry.metrics(), registry.metrics()]);
    await registry.metrics();
    expect(state.calls).toBe(1);
  });

  it('shows no counts and store_up 0 while the store cannot be reached, and recovers', async () => {
    const registry = new Registry();
    const { store, state } = countingStore([{ label: 'default', status: 'good', count: 1 }], []);
    watchCertificateStore(registry, { store, signers: signers.slice(0, 1), countRefreshMs: 0 });
    state.down = true;
    let text = await registry.metrics();
    expect(text).toContain('certsmith_certificate_store_up 0');
    expect(text).not.toContain('certsmith_certificates{');
    state.down = false;
    text = await registry.metrics();
    expect(text).toContain('certsmith_certificate_store_up 1');
    expect(text).toContain('certsmith_certificates{label="default",status="good"} 1');
  });

  it('counts tidy runs and what they removed', async () => {
    const registry = new Registry();
    const { store } = countingStore([], []);
    const metrics = watchCertificateStore(registry, { store, signers: [], now: () => now });
    metrics.observeTidy({ certificates: 3, ocspResponses: 2, changes: 7 });
    metrics.observeTidyFailure();
    const text = await registry.metrics();
    expect(text).toContain('certsmith_certificate_store_tidy_runs_total{outcome="success"} 1');
    expect(text).toContain('certsmith_certificate_store_tidy_runs_total{outcome="failure"} 1');
    expect(text).toContain('certsmith_certificate_store_tidy_removed_total{kind="certificates"} 3');
    expect(text).toContain('certsmith_certificate_store_tidy_removed_total{kind="ocsp_responses"} 2');
    expect(text).toContain(`certsmith_certificate_store_last_tidy_timestamp_seconds ${now.getTime() / 1000}`);
  });
});
