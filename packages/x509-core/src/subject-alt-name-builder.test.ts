import { describe, expect, it } from 'vitest';

import { classifyHost, encodeSubjectAltNames, parseIpAddress, parseMailAddress, parseRequestUri, sansFromHosts } from './subject-alt-name-builder.js';

const kind = (host: string): string => {
  const classified = classifyHost(host);
  return classified.kind === 'ip' ? `ip:${Buffer.from(classified.value).toString('hex')}` : `${classified.kind}:${classified.value}`;
};

describe('classifyHost', () => {
  it.each([
    ['www.example.com', 'dns:www.example.com'],
    ['192.168.1.10', 'ip:c0a8010a'],
    ['admin@example.com', 'email:admin@example.com'],
    ['spiffe://example.org/svc', 'uri:spiffe://example.org/svc'],
    ['localhost:8080', 'uri:localhost:8080'],
    ['*.example.com', 'dns:*.example.com'],
    ['example.com:443', 'uri:example.com:443'],
    ['John Doe <jd@example.com>', 'email:jd@example.com'],
    ['/just/a/path', 'uri:/just/a/path'],
    ['::1', 'ip:00000000000000000000000000000001'],
    ['ftp://x.y/z', 'uri:ftp://x.y/z'],
    ['UPPER.Example.COM', 'dns:UPPER.Example.COM'],
    ['', 'dns:'],
    ['::ffff:10.0.0.1', 'ip:0a000001'],
    ['01.2.3.4', 'dns:01.2.3.4'],
    ['10.0.0.1:80', 'dns:10.0.0.1:80'],
    // Go's ParseIP has no zones, but `fe80` parses as a URI scheme with an opaque part.
    ['fe80::1%eth0', 'uri:fe80::1%eth0'],
    ['HTTP://Example.com/x', 'uri:http://Example.com/x'],
    ['http://exa mple.com/', 'dns:http://exa mple.com/'],
    ['<a@b.c>', 'email:a@b.c'],
  ])('classifies the host as CFSSL does when given %j', (host, expected) => {
    expect(kind(host)).toBe(expected);
  });
});

describe('parseIpAddress', () => {
  it('returns 16 bytes when the address is real IPv6', () => {
    expect(parseIpAddress('2001:db8::1')?.length).toBe(16);
    expect(parseIpAddress('1:2:3:4:5:6:7:8')?.length).toBe(16);
  });

  it('returns null when the address is malformed', () => {
    for (const text of ['1.2.3', '256.1.1.1', '1::2::3', '12345::', 'a.b.c.d', '1:2:3:4:5:6:7:8:9']) expect(parseIpAddress(text)).toBeNull();
  });
});

describe('parseMailAddress', () => {
  it('returns the bare address when given RFC 5322 forms', () => {
    expect(parseMailAddress('a@b')).toBe('a@b');
    expect(parseMailAddress('"John Doe" <jd@example.com>')).toBe('jd@example.com');
    expect(parseMailAddress('jd@example.com (comment)')).toBe('jd@example.com');
  });

  it('returns null when the text is not a single address', () => {
    for (const text of ['a@b..c', '@example.com', 'a@', 'a b@c', 'a@b.com, c@d.com', 'plain']) expect(parseMailAddress(text)).toBeNull();
  });
});

describe('parseRequestUri', () => {
  it('returns null when Go would refuse the request URI', () => {
    for (const text of ['', 'relative/path', ':nothing', 'http://host:port/']) expect(parseRequestUri(text)).toBeNull();
  });
});

describe('encodeSubjectAltNames', () => {
  it('groups names DNS, email, IP, URI when hosts are mixed', () => {
    const der = encodeSubjectAltNames(sansFromHosts(['spiffe://x/y', '10.0.0.1', 'a@b.c', 'd.example']));
    const tags = [];
    for (let i = 2; i < der.length; i += 2 + der[i + 1]!) tags.push(der[i]);
    expect(tags).toEqual([0x82, 0x81, 0x87, 0x86]);
  });

  it('throws 9300 when a name is not ASCII', () => {
    expect(() => encodeSubjectAltNames(sansFromHosts(['exämple.com']))).toThrow(
      expect.objectContaining({ code: 9300, message: 'x509: "exämple.com" cannot be encoded as an IA5String' }) as Error,
    );
  });
});
