import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { createLogger } from './logger.js';
import type { LogLevel } from './logger.js';
import { createRequestLog } from './request-log.js';
import type { RequestLogFields } from './request-log.js';

const FIELDS: RequestLogFields = {
  reqId: '0b8f2f7e-4a53-4c39-9f0e-5d1c2b7a9e11',
  method: 'POST',
  path: '/api/v1/cfssl/newcert',
  operation: 'newcert',
  status: 200,
  code: undefined,
  label: 'primary',
  profile: 'server',
  durationMs: 2.345,
};

/** Field sets whose lines must be pino's, byte for byte: the client chooses X-Request-Id, the path, label and profile. */
const CASES: Array<[string, RequestLogFields]> = [
  ['a success', FIELDS],
  ['an error with its code and no labels', { ...FIELDS, operation: 'sign', status: 400, code: 1002, label: undefined, profile: undefined }],
  ['a path nothing serves', { ...FIELDS, path: '/nothing', operation: undefined, status: 404, code: 404, label: undefined, profile: undefined }],
  ['quotes and backslashes', { ...FIELDS, path: '/a"b\\c', label: 'say "hi"\\', profile: '\\' }],
  ['control characters', { ...FIELDS, path: '/a\tb', label: 'line\nbreak\u0000', profile: '\u001f' }],
  ['a lone surrogate and line separators', { ...FIELDS, label: 'x\ud800y', profile: '\u2028\u2029\ud83d\ude00' }],
  ['strings longer than 100 characters', { ...FIELDS, path: `/${'p'.repeat(120)}"`, label: `${'l'.repeat(101)}\ud800`, profile: 'é'.repeat(128) }],
  ['empty strings', { ...FIELDS, method: '', path: '', operation: '', label: '', profile: '' }],
  ['numbers pino writes as null or 0', { ...FIELDS, status: Number.NaN, code: Number.POSITIVE_INFINITY, durationMs: -0 }],
  ['large and tiny numbers', { ...FIELDS, status: 599, code: 9300, durationMs: 1e-7 }],
];

function capture(options: { level?: LogLevel; base?: Record<string, unknown> } = {}) {
  const lines: string[] = [];
  const logger = createLogger({ ...options, destination: { write: (line: string) => void lines.push(line) } });
  return { logger, lines };
}

describe('createRequestLog', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-26T16:51:27.534Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(CASES)('writes the line pino writes for %s', (_name, fields) => {
    for (const base of [undefined, { pid: 4242, service: 'a"b' }]) {
      const { logger, lines } = capture(base === undefined ? {} : { base });
      createRequestLog(logger)(fields);
      logger.child({}, { redact: { paths: [] } }).info(fields, 'request');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe(lines[1]);
    }
  });

  it('writes durations rounded to the microsecond as pino does', () => {
    const { logger, lines } = capture();
    const log = createRequestLog(logger);
    const pinoLine = logger.child({}, { redact: { paths: [] } });
    const microseconds = [...Array.from({ length: 3000 }, (_, index) => index), 999_999, 1_000_001, 12_345_678, 2 ** 40 + 7, 999_999_999_999_999, 10 ** 15 + 1, 2 ** 53 + 2];
    for (const count of microseconds) {
      const fields = { ...FIELDS, durationMs: Math.round((count / 1000) * 1000) / 1000 };
      log(fields);
      pinoLine.info(fields, 'request');
    }
    for (const durationMs of [0.1 + 0.2, 1 / 3, 1e21, 1e-7, -1.5, -0.001]) {
      log({ ...FIELDS, durationMs });
      pinoLine.info({ ...FIELDS, durationMs }, 'request');
    }
    for (let index = 0; index < lines.length; index += 2) expect(lines[index]).toBe(lines[index + 1]);
  });

  it('writes the time as pino does across seconds, years and the epoch', () => {
    const { logger, lines } = capture();
    const log = createRequestLog(logger);
    const pinoLine = logger.child({}, { redact: { paths: [] } });
    const times = [
      '2026-11-26T16:51:27.999Z',
      '2026-11-26T16:51:28.000Z',
      '2026-11-26T16:51:28.001Z',
      '2026-11-26T16:51:27.500Z',
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
      '+010000-01-01T00:00:00.001Z',
      '2026-11-26T16:51:29.042Z',
    ];
    for (const time of times) {
      vi.setSystemTime(new Date(time));
      log(FIELDS);
      pinoLine.info(FIELDS, 'request');
    }
    for (let index = 0; index < lines.length; index += 2) expect(lines[index]).toBe(lines[index + 1]);
    expect(lines.filter((_, index) => index % 2 === 0).map((line) => (JSON.parse(line) as { time: string }).time)).toEqual(times);
  });

  it('writes the time of each line, not of the first one', () => {
    const { logger, lines } = capture();
    const log = createRequestLog(logger);
    log(FIELDS);
    vi.setSystemTime(new Date('2026-11-26T16:51:27.535Z'));
    log(FIELDS);
    vi.setSystemTime(new Date('2027-01-01T00:00:00.000Z'));
    log(FIELDS);
    expect(lines.map((line) => (JSON.parse(line) as { time: string }).time)).toEqual(['2026-11-26T16:51:27.534Z', '2026-11-26T16:51:27.535Z', '2027-01-01T00:00:00.000Z']);
  });

  it('writes nothing while the level is above info, and lines again once it is lowered', () => {
    const { logger, lines } = capture({ level: 'warn' });
    const log = createRequestLog(logger);
    log(FIELDS);
    expect(lines).toHaveLength(0);
    logger.level = 'debug';
    log(FIELDS);
    logger.level = 'silent';
    log(FIELDS);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'request', reqId: FIELDS.reqId });
  });

  it("writes through pino when the logger is not createLogger's (its own format applies)", () => {
    const lines: string[] = [];
    const logger = pino({ messageKey: 'message', formatters: { level: (label) => ({ severity: label }) } }, { write: (line: string) => void lines.push(line) });
    createRequestLog(logger)(FIELDS);
    expect(JSON.parse(lines[0]!)).toMatchObject({ severity: 'info', message: 'request', reqId: FIELDS.reqId, status: 200 });
  });

  it('writes through pino into a multistream (which wants each line’s level)', () => {
    const lines: string[] = [];
    const logger = createLogger({ destination: pino.multistream([{ level: 'info', stream: { write: (line: string) => void lines.push(line) } }]) });
    createRequestLog(logger)(FIELDS);
    createRequestLog(logger)({ ...FIELDS, label: 'x"y' });
    expect(lines.map((line) => (JSON.parse(line) as { label: string }).label)).toEqual(['primary', 'x"y']);
  });
});
