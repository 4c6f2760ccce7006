import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LOG_WRITE_INTERVAL_MS, createLogger } from './logger.js';

/** The built logger module: a child `node` process runs plain JavaScript. */
const BUILT_LOGGER = fileURLToPath(new URL('../dist/logger.js', import.meta.url));

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

  it('writes stdout asynchronously yet loses no line when the process exits right after logging', () => {
    // 2,000 lines, then process.exit() with no chance for the event loop to write them: pino's
    // exit hook must flush the pending lines synchronously.
    const script = `
      const { createLogger } = await import(${JSON.stringify(BUILT_LOGGER)});
      const logger = createLogger();
      for (let i = 0; i < 2000; i++) logger.info({ i }, 'line');
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(child.status).toBe(0);
    const lines = child.stdout.trim().split('\n').map((line) => JSON.parse(line) as { i: number });
    expect(lines).toHaveLength(2000);
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it(`writes the lines of ${LOG_WRITE_INTERVAL_MS} ms to stdout with one write, after that interval`, () => {
    // Count sonic-boom's writes to fd 1 (it calls fs.write through the module object).
    const script = `
      const fs = (await import('node:fs')).default;
      const write = fs.write;
      const writes = [];
      fs.write = function (fd, data, ...rest) {
        if (fd === 1) writes.push(String(data).split('\\n').filter(Boolean).length);
        return write.call(this, fd, data, ...rest);
      };
      const { createLogger } = await import(${JSON.stringify(BUILT_LOGGER)});
      const logger = createLogger();
      const started = performance.now();
      for (let i = 0; i < 20; i++) logger.info({ i }, 'line');
      const inTurn = writes.length;
      // Lines of later turns within the interval join them.
      setImmediate(() => {
        for (let i = 20; i < 30; i++) logger.info({ i }, 'line');
        const nextTurn = writes.length;
        const withinInterval = performance.now() - started < ${LOG_WRITE_INTERVAL_MS};
        setTimeout(() => {
          logger.info('alone');
          setTimeout(() => { process.stderr.write(JSON.stringify({ inTurn, nextTurn, withinInterval, writes })); process.exit(0); }, 200);
        }, 100);
      });
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(child.status).toBe(0);
    const seen = JSON.parse(child.stderr) as { inTurn: number; nextTurn: number; withinInterval: boolean; writes: number[] };
    expect(seen.inTurn).toBe(0);
    // The 30 lines in one write; then the quiet server's line alone. (A machine too busy to reach
    // the next turn within the interval may have written the first 20 on their own.)
    if (seen.withinInterval) expect(seen).toMatchObject({ nextTurn: 0, writes: [30, 1] });
    else expect([[30, 1], [20, 10, 1]]).toContainEqual(seen.writes);
    expect(child.stdout.trim().split('\n')).toHaveLength(31);
  });
});
