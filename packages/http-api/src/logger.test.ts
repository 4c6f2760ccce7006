import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('createLogger', () => {
  it('redacts private keys, PINs, tokens and auth keys wherever they appear', () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    logger.info(
      {
        private_key: 'K1',
        signer: { pin: 'P1', auth_key: 'A1', options: { token: 'T1', keyLabel: 'visible' } },
        headers: { authorization: 'Bearer B1' },
      },
      'configured',
    );
    const text = lines.join('');
    for (const secret of ['K1', 'P1', 'A1', 'T1', 'B1']) expect(text).not.toContain(secret);
    expect(text).toContain('visible');
    expect(text).toContain('[redacted]');
  });

  it('writes JSON lines with an ISO time and the level', () => {
    const lines: string[] = [];
    createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } }).warn('hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: 'hello', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });
});
