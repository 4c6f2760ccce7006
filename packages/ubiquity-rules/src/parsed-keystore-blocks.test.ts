import { describe, expect, it } from 'vitest';
import { ParsedKeystoreBlocks } from './parsed-keystore-blocks.js';

describe('ParsedKeystoreBlocks', () => {
  it('answers for the exact body only when bodies share their last characters', () => {
    const tail = 'x'.repeat(40);
    const blocks = new ParsedKeystoreBlocks();
    blocks.set(`A${tail}`, ['a']);
    blocks.set(`B${tail}`, []);
    expect(blocks.get(`A${tail}`)).toEqual(['a']);
    expect(blocks.get(`B${tail}`)).toEqual([]);
    expect(blocks.get(`B${tail}`)).toBeDefined();
    expect(blocks.get(`C${tail}`)).toBeUndefined();
    expect(blocks.get(tail)).toBeUndefined();
  });

  it('keys bodies shorter than the tail by the whole body', () => {
    const blocks = new ParsedKeystoreBlocks();
    blocks.set('AQID', ['h']);
    expect(blocks.get('AQID')).toEqual(['h']);
    expect(blocks.get('QID')).toBeUndefined();
  });
});
