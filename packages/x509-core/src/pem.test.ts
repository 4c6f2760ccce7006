import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { certificateToPem, decodePemBlock, decodePemBlocks, decodePemBody, encodePem, findPemBlock, isPaddedBase64 } from './pem.js';

const body = (bytes: number[]): string => Buffer.from(bytes).toString('base64');

describe('decodePemBlocks', () => {
  it('returns type, headers and bytes of each block when text surrounds them', () => {
    const text = [
      'leading text',
      '-----BEGIN RSA PRIVATE KEY-----',
      'Proc-Type: 4,ENCRYPTED',
      'DEK-Info: AES-256-CBC,0011',
      '',
      body([1, 2, 3]),
      '-----END RSA PRIVATE KEY-----',
      'between',
      '-----BEGIN X-----',
      body([4]),
      '-----END X-----',
    ].join('\n');
    const blocks = decodePemBlocks(text);
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatchObject({ type: 'RSA PRIVATE KEY', headers: { 'Proc-Type': '4,ENCRYPTED', 'DEK-Info': 'AES-256-CBC,0011' } });
    expect([...blocks[0]!.bytes]).toEqual([1, 2, 3]);
    expect(blocks[1]).toMatchObject({ type: 'X', headers: {} });
  });

  it('skips a block whose END label differs or whose base64 is invalid, as Go does', () => {
    const bad = `-----BEGIN A-----\n${body([1])}\n-----END B-----\n-----BEGIN C-----\n!!!!\n-----END C-----\n`;
    expect(decodePemBlocks(bad)).toEqual([]);
    const then = `${bad}-----BEGIN D-----\n${body([9])}\n-----END D-----\n`;
    expect(decodePemBlocks(then).map((block) => block.type)).toEqual(['D']);
  });

  it('ignores CRLF, spaces and tabs inside the body but requires padding', () => {
    const crlf = `-----BEGIN T-----\r\n${body([1, 2, 3, 4, 5]).slice(0, 4)} \t\r\n${body([1, 2, 3, 4, 5]).slice(4)}\r\n-----END T-----\r\n`;
    expect([...decodePemBlocks(crlf)[0]!.bytes]).toEqual([1, 2, 3, 4, 5]);
    expect(decodePemBlocks('-----BEGIN T-----\nAQI\n-----END T-----\n')).toEqual([]);
  });

  it('requires BEGIN at the start of a line', () => {
    expect(decodePemBlocks(`x -----BEGIN T-----\n${body([1])}\n-----END T-----\n`)).toEqual([]);
  });
});

describe('isPaddedBase64', () => {
  // The grammar spelled out (Go's StdEncoding with whitespace skipped): the specification the fast
  // check must agree with on every string.
  const ws = '[ \\t\\r\\n]*';
  const data = '[A-Za-z0-9+/]';
  const grammar = new RegExp(`^${ws}(?:${data}${ws}${data}${ws}${data}${ws}${data}${ws})*(?:${data}${ws}${data}${ws}(?:${data}${ws}=|=${ws}=)${ws})?$`);

  it('agrees with the base64 grammar on arbitrary strings of base64, padding and whitespace characters', () => {
    const character = fc.constantFrom('A', 'z', '0', '+', '/', '=', '\n', '\r', ' ', '\t', '-', '_', '.');
    fc.assert(
      fc.property(fc.array(character, { maxLength: 14 }), (characters) => {
        const text = characters.join('');
        expect(isPaddedBase64(text)).toBe(grammar.test(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('accepts encodings of any bytes wrapped at any width, and refuses them with one character dropped', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 100 }), fc.integer({ min: 1, max: 80 }), fc.constantFrom('\n', '\r\n', ' \t'), (bytes, width, newline) => {
        const encoded = Buffer.from(bytes).toString('base64');
        const wrapped = encoded.match(new RegExp(`.{1,${width}}`, 'g'))!.join(newline);
        expect(isPaddedBase64(wrapped)).toBe(true);
        expect(isPaddedBase64(wrapped.slice(1))).toBe(false);
      }),
    );
  });
});

describe('decodePemBlock', () => {
  it('reports where the block starts and where the rest begins', () => {
    const block = encodePem('T', Uint8Array.of(7));
    const match = decodePemBlock(`ab\n${block}tail`)!;
    expect(match.start).toBe(3);
    expect(`ab\n${block}tail`.slice(match.end)).toBe('tail');
    expect(decodePemBlock('no pem here')).toBeNull();
  });

  it('decodes a body exactly when it is padded base64, wrapped or not', () => {
    const character = fc.constantFrom('A', 'Q', 'g', 'z', '0', '+', '/', '=', '\n', '\r', ' ', '\t', '-');
    const canonical = fc
      .tuple(fc.uint8Array({ maxLength: 60 }), fc.integer({ min: 1, max: 80 }))
      .map(([bytes, width]) => Buffer.from(bytes).toString('base64').match(new RegExp(`.{1,${width}}`, 'g'))?.join('\n') ?? '');
    fc.assert(
      fc.property(fc.oneof(fc.array(character, { maxLength: 14 }).map((characters) => characters.join('')), canonical), (text) => {
        const match = decodePemBlock(`-----BEGIN T-----\n${text}\n-----END T-----\n`);
        if (!isPaddedBase64(text)) {
          expect(match).toBeNull();
          return;
        }
        expect(match).not.toBeNull();
        expect([...match!.block.bytes]).toEqual([...Buffer.from(text, 'base64')]);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('findPemBlock', () => {
  it('locates the body of the block decodePemBlock decodes, without decoding it', () => {
    const text = `junk\n-----BEGIN C-----\n!!!!\n-----END C-----\n${encodePem('T', Uint8Array.of(1, 2, 3, 4))}rest`;
    const location = findPemBlock(text)!;
    const match = decodePemBlock(text)!;
    expect(location).toMatchObject({ type: 'T', headers: {}, start: match.start, end: match.end });
    expect(text.slice(location.bodyStart, location.bodyEnd)).toBe('AQIDBA==');
    expect([...decodePemBody(text, location)]).toEqual([1, 2, 3, 4]);
    expect(findPemBlock(text, location.end)).toBeNull();
  });

  it('skips the base64 check only for bodies the caller has seen before', () => {
    const malformed = '-----BEGIN T-----\nAQI\n-----END T-----\n';
    expect(findPemBlock(malformed)).toBeNull();
    expect(findPemBlock(malformed, 0, (body) => body === 'other')).toBeNull();
    const seen: string[] = [];
    const valid = encodePem('T', Uint8Array.of(9));
    expect(findPemBlock(valid, 0, (body) => (seen.push(body), false))).not.toBeNull();
    expect(seen).toEqual(['CQ==']);
  });
});

describe('encodePem', () => {
  it('wraps base64 at 64 characters and ends with a newline', () => {
    const pem = encodePem('CERTIFICATE', new Uint8Array(100).fill(0xab));
    const lines = pem.split('\n');
    expect(lines[0]).toBe('-----BEGIN CERTIFICATE-----');
    expect(lines[1]).toHaveLength(64);
    expect(lines.at(-2)).toBe('-----END CERTIFICATE-----');
    expect(pem.endsWith('-----\n')).toBe(true);
    expect([...decodePemBlocks(pem)[0]!.bytes]).toEqual([...new Uint8Array(100).fill(0xab)]);
  });
});

describe('certificateToPem', () => {
  it('uses the CERTIFICATE label', () => {
    expect(certificateToPem(Uint8Array.of(0x30, 0)).startsWith('-----BEGIN CERTIFICATE-----\nMAA=\n')).toBe(true);
  });
});
