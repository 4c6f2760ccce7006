import { describe, expect, it } from 'vitest';

import { decodeCertificateRequest, decodeNewCertificateRequest, decodeSignRequest } from './certificate-request.js';

describe('decodeNewCertificateRequest', () => {
  it('fills CFSSL defaults when the body is empty or null', () => {
    for (const body of [{}, null]) {
      const decoded = decodeNewCertificateRequest(body);
      expect(decoded.request.key).toEqual({ algo: 'ecdsa', size: 256 });
      expect(decoded.request.hosts).toBeNull();
      expect(decoded.profile).toBe('');
    }
  });

  it('keeps the default size when only the algorithm is given', () => {
    expect(decodeNewCertificateRequest({ request: { key: { algo: 'rsa' } } }).request.key).toEqual({ algo: 'rsa', size: 256 });
  });

  it('keeps the default algorithm when only the size is given', () => {
    expect(decodeNewCertificateRequest({ request: { key: { size: 384 } } }).request.key).toEqual({ algo: 'ecdsa', size: 384 });
  });

  it('clears the key when it is null so the default applies later', () => {
    expect(decodeNewCertificateRequest({ request: { key: null } }).request.key).toBeNull();
  });

  it('matches keys case-insensitively when they differ in case', () => {
    const decoded = decodeNewCertificateRequest({ REQUEST: { cn: 'ci.example', HOSTS: ['ci.example'], Names: [{ c: 'DE', o: 'Org' }] }, Profile: 'p' });
    expect(decoded.request.CN).toBe('ci.example');
    expect(decoded.request.hosts).toEqual(['ci.example']);
    expect(decoded.request.names).toEqual([expect.objectContaining({ C: 'DE', O: 'Org' })]);
    expect(decoded.profile).toBe('p');
  });

  it('ignores unknown keys when present', () => {
    expect(decodeNewCertificateRequest({ request: { CN: 'x', bogus: 1 }, extra: true }).request.CN).toBe('x');
  });

  it('throws 400 missing request section when request is null', () => {
    expect(() => decodeNewCertificateRequest({ request: null })).toThrow(expect.objectContaining({ code: 400, message: 'missing request section' }) as Error);
  });

  it('throws 400 when a ca section is present, even empty', () => {
    for (const ca of [{}, { pathlen: 1 }]) {
      expect(() => decodeNewCertificateRequest({ request: { CN: 'a', ca } })).toThrow(
        expect.objectContaining({ code: 400, message: 'ca section only permitted in initca' }) as Error,
      );
    }
  });

  it.each([
    [{ request: { CN: 'a', hosts: 'a' } }, 'json: cannot unmarshal string into Go struct field CertificateRequest.request.hosts of type []string'],
    [[], 'json: cannot unmarshal array into Go value of type generator.genSignRequest'],
    [{ request: { key: { size: '256' } } }, 'json: cannot unmarshal string into Go struct field KeyRequest.request.key.size of type int'],
    [{ request: { key: { size: 256.5 } } }, 'json: cannot unmarshal number 256.5 into Go struct field KeyRequest.request.key.size of type int'],
    [{ request: { CN: 5 } }, 'json: cannot unmarshal number into Go struct field CertificateRequest.request.CN of type string'],
    [{ profile: true }, 'json: cannot unmarshal bool into Go struct field genSignRequest.profile of type string'],
    [{ request: { names: [{ C: 1 }] } }, 'json: cannot unmarshal number into Go struct field Name.request.names.C of type string'],
  ])('throws 400 with Go\'s text when a field has the wrong type (%j)', (body, message) => {
    expect(() => decodeNewCertificateRequest(body)).toThrow(expect.objectContaining({ code: 400, message }) as Error);
  });

  it('decodes extensions with base64 values when given Go field names in any case', () => {
    const decoded = decodeNewCertificateRequest({ request: { extensions: [{ id: [1, 2, 3, 4], critical: true, value: 'BQA=' }] } });
    expect(decoded.request.extensions?.[0]).toEqual({ id: [1, 2, 3, 4], critical: true, value: Uint8Array.of(5, 0) });
  });
});

describe('decodeCertificateRequest', () => {
  it('names csr.CertificateRequest when the body is not an object', () => {
    expect(() => decodeCertificateRequest('x')).toThrow('json: cannot unmarshal string into Go value of type csr.CertificateRequest');
  });

  it('refuses a ca section when present', () => {
    expect(() => decodeCertificateRequest({ ca: {} })).toThrow('ca section only permitted in initca');
  });
});

describe('decodeSignRequest', () => {
  it('prefers a comma-separated hostname over hosts when both are given', () => {
    const decoded = decodeSignRequest({ certificate_request: 'PEM', hostname: 'a.example,10.0.0.1', hosts: ['ignored'] });
    expect(decoded.hosts).toEqual(['a.example', '10.0.0.1']);
  });

  it('keeps hosts null when none is given', () => {
    expect(decodeSignRequest({ certificate_request: 'PEM' }).hosts).toBeNull();
  });

  it('throws 400 missing parameter when the CSR is absent', () => {
    expect(() => decodeSignRequest({})).toThrow(expect.objectContaining({ code: 400, message: "missing parameter 'certificate_request'" }) as Error);
  });

  it('throws 400 Unable to parse sign request when a field has the wrong type', () => {
    expect(() => decodeSignRequest({ certificate_request: 1 })).toThrow(expect.objectContaining({ code: 400, message: 'Unable to parse sign request' }) as Error);
  });

  it('reads serial as a bigint when given an integer (a bigint beyond 2^53); refuses a string, as big.Int does', () => {
    expect(decodeSignRequest({ certificate_request: 'x', serial: 42 }).serial).toBe(42n);
    expect(decodeSignRequest({ certificate_request: 'x', serial: 123456789012345678901234567890n }).serial).toBe(123456789012345678901234567890n);
    expect(() => decodeSignRequest({ certificate_request: 'x', serial: '123' })).toThrow('Unable to parse sign request');
    expect(() => decodeSignRequest({ certificate_request: 'x', serial: 1.5 })).toThrow('Unable to parse sign request');
  });
});

describe('decodeSignRequest (fields CFSSL does not read)', () => {
  it('drops crl_override, extensions and validity when they come through the HTTP body', () => {
    const decoded = decodeSignRequest({ certificate_request: 'x', crl_override: 'http://c', extensions: 'not even an array', NotBefore: 1 });
    expect(decoded).toEqual({ certificate_request: 'x', hosts: null });
  });
});
