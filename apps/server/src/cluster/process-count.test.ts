import { describe, expect, it } from 'vitest';
import { readServeFlags } from '../serve-prestart.js';
import { DEFAULT_PROCESSES, serveProcessCount } from './process-count.js';

const count = (...args: string[]): number => serveProcessCount(readServeFlags(args), args);

describe('serveProcessCount', () => {
  it('reads --processes in every spelling the program accepts', () => {
    expect(count('--processes', '3')).toBe(3);
    expect(count('--processes=4')).toBe(4);
    expect(count('-processes', '2', '--port', '0')).toBe(2);
    expect(count('-processes=64')).toBe(64);
  });

  it('is the default without the flag', () => {
    expect(count('--port', '0')).toBe(DEFAULT_PROCESSES);
  });

  it('leaves a bad value and help to one process, which reports them as the program does', () => {
    for (const value of ['0', '65', 'two', '-1', '']) expect(count(`--processes=${value}`)).toBe(1);
    expect(count('--processes', '--port', '0')).toBe(1);
    expect(count('--processes', '2', '--help')).toBe(1);
    expect(count('-h', '--processes', '2')).toBe(1);
  });
});
