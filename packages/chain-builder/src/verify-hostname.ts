/**
 * Go's `Certificate.VerifyHostname` and `HostnameError` texts (behaviour doc 2.1): IPs match only IP
 * SANs (RFC 6125 B.2), names match DNS SANs with a left-most `*` wildcard, and the Common Name is
 * never used (Go ≥1.15), which gets its own "legacy Common Name" message.
 */
import { isIP } from 'node:net';
import { ErrorCode } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';
import type { ChainProblem } from './go-errors.js';

/** 16-byte form of an IPv4/IPv6 text address (IPv4 as IPv4-mapped), `null` when not an IP (Go `net.ParseIP`). */
export function parseIpAddress(text: string): Uint8Array | null {
  const family = isIP(text);
  if (family === 0 || text.includes('%')) return null;
  const out = new Uint8Array(16);
  if (family === 4) {
    out[10] = 0xff;
    out[11] = 0xff;
    text.split('.').forEach((part, i) => (out[12 + i] = Number(part)));
    return out;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const v4 = g.split('.').map(Number) as [number, number, number, number];
          return [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
        });
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

const toLowerAscii = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** Go's `validHostname`: letters, digits, `-` (not first), `_`; a `*` first label only in patterns. */
function validHostname(host: string, isPattern: boolean): boolean {
  const h = isPattern ? host : host.replace(/\.$/, '');
  if (h.length === 0) return false;
  const labels = h.split('.');
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as string;
    if (label === '') return false;
    if (isPattern && i === 0 && label === '*') continue;
    for (let j = 0; j < label.length; j++) {
      const c = label[j] as string;
      if (/[a-zA-Z0-9_]/.test(c) || (c === '-' && j !== 0)) continue;
      return false;
    }
  }
  return true;
}

/** Go's `matchHostnames`: label-wise, `*` matches exactly one left-most label; trailing dot ignored. */
export function matchHostnames(pattern: string, host: string): boolean {
  const p = toLowerAscii(pattern);
  const h = toLowerAscii(host.replace(/\.$/, ''));
  if (p.length === 0 || h.length === 0) return false;
  const pl = p.split('.');
  const hl = h.split('.');
  if (pl.length !== hl.length) return false;
  return pl.every((label, i) => (i === 0 && label === '*') || label === hl[i]);
}

function matchExactly(a: string, b: string): boolean {
  if (a === '' || a === '.' || b === '' || b === '.') return false;
  return toLowerAscii(a) === toLowerAscii(b);
}

function hostnameError(cert: Certificate, host: string): ChainProblem {
  const fail = (message: string): ChainProblem => ({ code: ErrorCode.CertificateVerifyFailed, message });
  const hasSanExtension = cert.extensions.some((e) => e.oid === '2.5.29.17');
  const cn = cert.subject.rdns.flat().filter((a) => a.oid === '2.5.4.3').pop()?.value ?? '';
  if (!hasSanExtension && matchHostnames(cn, host)) {
    return fail('x509: certificate relies on legacy Common Name field, use SANs instead');
  }
  let valid: string;
  if (parseIpAddress(host) !== null) {
    if (cert.subjectAltNames.ip.length === 0) {
      return fail(`x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`);
    }
    valid = cert.subjectAltNames.ip.join(', ');
  } else {
    valid = cert.subjectAltNames.dns.join(', ');
  }
  if (valid.length === 0) return fail(`x509: certificate is not valid for any names, but wanted to match ${host}`);
  return fail(`x509: certificate is valid for ${valid}, not ${host}`);
}

/**
 * Check `name` (a DNS name, an IP, or `[IPv6]`) against the certificate's SANs. Returns `null` when
 * it matches, else CFSSL's 1200 with Go's text.
 */
export function verifyHostname(cert: Certificate, name: string): ChainProblem | null {
  const candidateIp = name.length >= 3 && name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  const ip = parseIpAddress(candidateIp);
  if (ip !== null) {
    const key = Buffer.from(ip).toString('hex');
    for (const san of cert.subjectAltNames.ip) {
      const sanBytes = parseIpAddress(san);
      if (sanBytes !== null && Buffer.from(sanBytes).toString('hex') === key) return null;
    }
    return hostnameError(cert, candidateIp);
  }
  const candidateName = toLowerAscii(name);
  const validCandidate = validHostname(candidateName, false);
  for (const pattern of cert.subjectAltNames.dns) {
    if (validCandidate && validHostname(pattern, true)) {
      if (matchHostnames(pattern, candidateName)) return null;
    } else if (matchExactly(pattern, candidateName)) {
      return null;
    }
  }
  return hostnameError(cert, name);
}
