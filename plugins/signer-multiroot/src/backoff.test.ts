import { describe, expect, it } from 'vitest';

import { RemoteBackoff } from './backoff.js';

describe('RemoteBackoff.recordFailure', () => {
  it('doubles the down period on each failed probe up to the cap', () => {
    const backoff = new RemoteBackoff('http://ca1:8888', { initialMs: 100, maxMs: 350 });
    expect(backoff.recordFailure(0)).toBe(100);
    expect(backoff.isDown(99)).toBe(true);
    expect(backoff.isDown(100)).toBe(false);
    expect(backoff.recordFailure(100)).toBe(200);
    expect(backoff.recordFailure(300)).toBe(350);
    expect(backoff.recordFailure(650)).toBe(350);
    expect(backoff.state(700)).toEqual({ remote: 'http://ca1:8888', down: true, consecutiveFailures: 4, downUntil: 1000 });
  });

  it('does not escalate when concurrent failures hit a remote already marked down', () => {
    const backoff = new RemoteBackoff('r', { initialMs: 100, maxMs: 1000 });
    backoff.recordFailure(0);
    expect(backoff.recordFailure(10)).toBeNull();
    expect(backoff.state(10).consecutiveFailures).toBe(1);
  });
});

describe('RemoteBackoff.recordSuccess', () => {
  it('clears the down mark and reports that the remote was failing', () => {
    const backoff = new RemoteBackoff('r', { initialMs: 100, maxMs: 1000 });
    expect(backoff.recordSuccess()).toBe(false);
    backoff.recordFailure(0);
    expect(backoff.recordSuccess()).toBe(true);
    expect(backoff.isDown(1)).toBe(false);
    expect(backoff.recordFailure(1)).toBe(100);
  });
});
