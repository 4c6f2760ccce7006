import { describe, expect, it } from 'vitest';

import { parseRemoteAddress, parseRemoteList } from './remote-address.js';

describe('parseRemoteAddress', () => {
  it('defaults the scheme to http and the port to 8888 when given CFSSL host form', () => {
    expect(parseRemoteAddress('ca1')).toEqual({ origin: 'http://ca1:8888', basePath: '', url: 'http://ca1:8888', scheme: 'http' });
    expect(parseRemoteAddress('127.0.0.1:9001').url).toBe('http://127.0.0.1:9001');
  });

  it('keeps an explicit port even when it is the scheme default', () => {
    expect(parseRemoteAddress('http://ca1:80').origin).toBe('http://ca1:80');
    expect(parseRemoteAddress('https://ca1').origin).toBe('https://ca1:8888');
  });

  it('keeps a path prefix without its trailing slash when given one', () => {
    expect(parseRemoteAddress('https://pki.example/ca1/')).toMatchObject({ origin: 'https://pki.example:8888', basePath: '/ca1', url: 'https://pki.example:8888/ca1' });
  });

  it('accepts bracketed IPv6 hosts', () => {
    expect(parseRemoteAddress('[::1]:9000').origin).toBe('http://[::1]:9000');
  });

  it('throws when the scheme is not http(s), credentials are embedded or the port is out of range', () => {
    expect(() => parseRemoteAddress('ftp://ca1')).toThrow(/must be http\(s\):\/\/host/);
    expect(() => parseRemoteAddress('http://user:pw@ca1:8888')).toThrow(/must be/);
    expect(() => parseRemoteAddress('ca1:70000')).toThrow(/port must be 1\.\.65535/);
  });
});

describe('parseRemoteList', () => {
  it('splits CFSSL comma-separated lists in order', () => {
    expect(parseRemoteList('ca1:8888, ca2:9000').map((remote) => remote.url)).toEqual(['http://ca1:8888', 'http://ca2:9000']);
  });

  it('throws naming the index when an entry is invalid or repeated', () => {
    expect(() => parseRemoteList(['ca1', 'ftp://x'])).toThrow(/^remotes\[1\] must be/);
    expect(() => parseRemoteList(['ca1', 'http://ca1:8888'])).toThrow('remotes[1] http://ca1:8888 is listed twice');
    expect(() => parseRemoteList([])).toThrow('remotes must name at least one remote');
  });
});
