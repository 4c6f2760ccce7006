import { describe, expect, it } from 'vitest';
import { JsonText, errorEnvelope, serializeEnvelope, successEnvelope } from './envelope.js';

describe('serializeEnvelope', () => {
  it("writes CFSSL's key order, compact, with a trailing newline", () => {
    expect(serializeEnvelope(successEnvelope({ ok: true }))).toBe('{"success":true,"result":{"ok":true},"errors":[],"messages":[]}\n');
    expect(serializeEnvelope(errorEnvelope(1000, 'bad'))).toBe('{"success":false,"result":null,"errors":[{"code":1000,"message":"bad"}],"messages":[]}\n');
  });

  it('sends a JsonText result byte for byte as the object it was made from', () => {
    const result = {
      bundle: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
      hostnames: ['a.example', 'ü.example'],
      ocsp: null,
      status: { code: 0, messages: ['line "quoted"\n', '\u2028'] },
    };
    const messages = [{ code: 1, message: 'note' }];
    const expected = serializeEnvelope(successEnvelope(result, messages));
    const envelope = successEnvelope(new JsonText(JSON.stringify(result)), messages);
    expect(serializeEnvelope(envelope)).toBe(expected);
    // Serialised as a whole (a caller that does not know the type) it still gives the same bytes.
    expect(`${JSON.stringify(envelope)}\n`).toBe(expected);
  });
});
