import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('createLogger', () => {
  it('redacts private keys, PINs, tokens and auth keys wherever they appear', () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    logger.info(
      {
        // Secret values that cannot occur by chance in a log line ('T1' did, in "…T10:03:26Z").
        private_key: 'secret-key-value',
        signer: { pin: 'secret-pin-value', auth_key: 'secret-auth-key-value', options: { token: 'secret-token-value', keyLabel: 'visible' } },
        headers: { authorization: 'Bearer secret-bearer-value' },
      },
      'configured',
    );
    const text = lines.join('');
    for (const secret of ['secret-key-value', 'secret-pin-value', 'secret-auth-key-value', 'secret-token-value', 'secret-bearer-value']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('visible');
    expect(text).toContain('[redacted]');
  });

  it('writes JSON lines with an ISO time and the level', () => {
    const lines: string[] = [];
    createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } }).warn('hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, msg: 'hello', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });
});
