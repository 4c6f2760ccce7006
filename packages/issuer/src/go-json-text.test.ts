import { describe, expect, it } from 'vitest';
import { decodeNewCertificateRequest, decodeSignRequest } from './certificate-request.js';
import { JsonNumberLiteral, parseGoJson } from './go-json-text.js';

describe('parseGoJson', () => {
  it.each([
    '{"request":{"CN":"a.example","hosts":["a.example","10.0.0.1:443"],"key":{"algo":"ecdsa","size":256}},"profile":"x"}',
    '{"certificate":"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n","n":-12,"z":0,"neg":-0}',
    '[1,2,{"a":[3,{"b":null}]}]',
    '{"s":"1.5e3 and \\":2.0 inside strings","a":{"a":{"a":1}}}',
    'null',
  ])('reads %s as JSON.parse does', (text) => {
    expect(parseGoJson(text)).toEqual(JSON.parse(text));
  });

  it('keeps number literals that are not plain integers as written, integers beyond 2^53 exactly', () => {
    const value = parseGoJson('{"a":2048.0,"b":1e3,"c":1.5,"d":123456789012345678901,"e":-0.0,"f":1e400,"g":-9007199254740993,"h":7}') as Record<string, unknown>;
    expect(value).toEqual({
      a: new JsonNumberLiteral('2048.0'),
      b: new JsonNumberLiteral('1e3'),
      c: 1.5,
      d: 123456789012345678901n,
      e: new JsonNumberLiteral('-0.0'),
      f: new JsonNumberLiteral('1e400'),
      g: -9007199254740993n,
      h: 7,
    });
  });

  it('refuses a key repeated with another value, and names it', () => {
    expect(() => parseGoJson('{"hosts":1,"hosts":["a"]}')).toThrow(expect.objectContaining({ code: 400, message: 'duplicate key "hosts" in a JSON object' }));
    expect(() => parseGoJson('{"request":{"CN":"a","CN":"b"}}')).toThrow(expect.objectContaining({ code: 400 }));
    expect(() => parseGoJson(`{"${'k'.repeat(100)}":1,"${'k'.repeat(100)}":2}`)).toThrow('duplicate key of more than 64 characters in a JSON object');
  });

  it('refuses a repeated key even with an equal value, and tells keys apart after their escapes', () => {
    expect(() => parseGoJson('{"a":{"b":[1,2]},"a":{"b":[1,2]}}')).toThrow('duplicate key "a" in a JSON object');
    expect(() => parseGoJson('{"a":1,"\\u0061":2}')).toThrow('duplicate key "a" in a JSON object');
    expect(parseGoJson('{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"\\"a\\":1"}')).toEqual({ a: { a: 1 }, b: [{ a: 1 }, { a: 2 }], c: '"a":1' });
  });

  it('keeps __proto__ as an own key, as JSON.parse does, also when its value is read exactly', () => {
    const value = parseGoJson('{"__proto__":{"x":1.0},"n":1.0}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    const direct = parseGoJson('{"__proto__":2.0}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(direct)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(direct, '__proto__')?.value).toEqual(new JsonNumberLiteral('2.0'));
  });

  it('reads a body nested 200,000 deep, and a 900 KB string of escapes, without recursion', () => {
    const deep = parseGoJson(`${'['.repeat(200_000)}1.0${']'.repeat(200_000)}`);
    let inner: unknown = deep;
    while (Array.isArray(inner)) inner = inner[0];
    expect(inner).toEqual(new JsonNumberLiteral('1.0'));
    const escapes = parseGoJson(`{"a":1.0,"b":"${'\\"'.repeat(450_000)}"}`) as Record<string, unknown>;
    expect((escapes['b'] as string).length).toBe(450_000);
  });

  it('never takes a string for a number, whatever it holds', () => {
    expect(parseGoJson('{"a":1.0,"b":"\\u0000x\\u00002.0"}')).toEqual({ a: new JsonNumberLiteral('1.0'), b: '\u0000x\u00002.0' });
  });

  it('throws SyntaxError for invalid JSON, as JSON.parse', () => {
    expect(() => parseGoJson('{"a":')).toThrow(SyntaxError);
  });
});

describe('decoding what parseGoJson read (Go semantics)', () => {
  it.each([
    ['2048.0', 'json: cannot unmarshal number 2048.0 into Go struct field KeyRequest.request.key.size of type int'],
    ['1e3', 'json: cannot unmarshal number 1e3 into Go struct field KeyRequest.request.key.size of type int'],
    ['2048.5', 'json: cannot unmarshal number 2048.5 into Go struct field KeyRequest.request.key.size of type int'],
    ['9223372036854775808', 'json: cannot unmarshal number 9223372036854775808 into Go struct field KeyRequest.request.key.size of type int'],
    ['"2048"', 'json: cannot unmarshal string into Go struct field KeyRequest.request.key.size of type int'],
  ])('refuses key size %s with Go\'s text', (size, message) => {
    expect(() => decodeNewCertificateRequest(parseGoJson(`{"request":{"key":{"algo":"rsa","size":${size}}}}`))).toThrow(message);
  });

  it('accepts an integer beyond 2^53 within int64 where Go has an int', () => {
    expect(decodeNewCertificateRequest(parseGoJson('{"request":{"key":{"algo":"rsa","size":9223372036854775807}}}')).request.key?.size).toBeGreaterThan(2 ** 62);
  });

  it('refuses a number where Go has a string or a struct, whatever its literal', () => {
    expect(() => decodeNewCertificateRequest(parseGoJson('{"request":1e3}'))).toThrow('json: cannot unmarshal number into Go struct field genSignRequest.request of type csr.CertificateRequest');
    expect(() => decodeNewCertificateRequest(parseGoJson('{"request":{"CN":2.0}}'))).toThrow('json: cannot unmarshal number into Go struct field CertificateRequest.request.CN of type string');
  });

  it.each([
    ['A===', 1],
    ['====', 0],
    ['AAA', 0],
    ['AAAAAA', 4],
    ['AA=A', 2],
    ['AA=', 3],
    ['!!', 0],
    ['AAAA=', 4],
    ['AA==AAAA', 4],
  ])('refuses extension value %s at Go\'s byte offset %i', (value, offset) => {
    expect(() => decodeNewCertificateRequest(parseGoJson(`{"request":{"extensions":[{"id":[1,2,3],"value":"${value}"}]}}`))).toThrow(`illegal base64 data at input byte ${offset}`);
  });

  it('decodes a []byte given as a JSON array of bytes, as Go does; refuses elements out of 0–255', () => {
    const decoded = decodeNewCertificateRequest(parseGoJson('{"request":{"extensions":[{"id":[1,2,3],"value":[5,0,null]}]}}'));
    expect([...decoded.request.extensions![0]!.value]).toEqual([5, 0, 0]);
    expect(() => decodeNewCertificateRequest(parseGoJson('{"request":{"extensions":[{"id":[1,2,3],"value":[256]}]}}'))).toThrow(
      'json: cannot unmarshal number 256 into Go struct field Extension.request.extensions.Value of type uint8',
    );
    expect(() => decodeNewCertificateRequest(parseGoJson('{"request":{"extensions":[{"id":[1,2,3],"value":["a"]}]}}'))).toThrow('of type uint8');
  });

  it('accepts padded base64 extension values', () => {
    expect(decodeNewCertificateRequest(parseGoJson('{"request":{"extensions":[{"id":[1,2,3],"value":"AA=="},{"id":[1,2,4],"value":"AAA="}]}}')).request.extensions).toHaveLength(2);
  });

  it('keeps a serial number beyond 2^53 exact; refuses 1e3 and a quoted serial read from JSON text', () => {
    const csr = '"certificate_request":"x"';
    expect(decodeSignRequest(parseGoJson(`{${csr},"serial":123456789012345678901234567890}`)).serial).toBe(123456789012345678901234567890n);
    expect(() => decodeSignRequest(parseGoJson(`{${csr},"serial":1e3}`))).toThrow('Unable to parse sign request');
  });
});
