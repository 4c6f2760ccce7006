/**
 * Name constraints (RFC 5280 4.2.1.10, 6.1.4 (g)) as Go's `isValid` applies them: a CA's permitted
 * and excluded subtrees are checked against the DNS, email, IP and URI SANs of every certificate below
 * it that has a SAN extension (the Common Name is not checked). Failures are CFSSL's 1212
 * (`CANotAuthorizedForThisName`) with Go's texts.
 */
import { ErrorCode } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';
import type { ChainProblem } from './go-errors.js';
import { parseIpAddress } from './verify-hostname.js';

const PREFIX = 'x509: a root or intermediate certificate is not authorized to sign for this name: ';
const problem = (detail: string): ChainProblem => ({ code: ErrorCode.CertificateCANotAuthorizedForThisName, message: PREFIX + detail });

/** Go's `domainToReverseLabels`: `null` for empty labels, a trailing dot or non-printable characters. */
function reverseLabels(domain: string): string[] | null {
  const labels: string[] = [];
  let rest = domain;
  while (rest.length > 0) {
    const i = rest.lastIndexOf('.');
    if (i === -1) {
      labels.push(rest);
      rest = '';
    } else {
      labels.push(rest.slice(i + 1));
      rest = rest.slice(0, i);
      if (i === 0) labels.push('');
    }
  }
  if (labels.length > 0 && labels[0] === '') return null;
  for (const label of labels) {
    if (label.length === 0) return null;
    for (const ch of label) {
      const c = ch.codePointAt(0) as number;
      if (c < 33 || c > 126) return null;
    }
  }
  return labels;
}

/** Go's `matchDomainConstraint`: label suffix match; a leading `.` requires at least one more label. */
function matchDomain(domain: string, constraint: string): boolean | string {
  if (constraint.length === 0) return true; // NSS: an empty constraint matches everything
  const domainLabels = reverseLabels(domain);
  if (!domainLabels) return `x509: internal error: cannot parse domain ${JSON.stringify(domain)}`;
  const mustHaveSubdomains = constraint.startsWith('.');
  const constraintLabels = reverseLabels(mustHaveSubdomains ? constraint.slice(1) : constraint);
  if (!constraintLabels) return `x509: internal error: cannot parse domain ${JSON.stringify(constraint)}`;
  if (domainLabels.length < constraintLabels.length || (mustHaveSubdomains && domainLabels.length === constraintLabels.length)) {
    return false;
  }
  return constraintLabels.every((label, i) => label.toLowerCase() === (domainLabels[i] as string).toLowerCase());
}

function splitMailbox(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/** Go's `matchEmailConstraint`: with `@` an exact mailbox, else a domain constraint on the mailbox's domain. */
function matchEmail(mailbox: { local: string; domain: string }, constraint: string): boolean | string {
  if (constraint.includes('@')) {
    const wanted = splitMailbox(constraint);
    if (!wanted) return `x509: internal error: cannot parse constraint ${JSON.stringify(constraint)}`;
    return mailbox.local === wanted.local && mailbox.domain.toLowerCase() === wanted.domain.toLowerCase();
  }
  return matchDomain(mailbox.domain, constraint);
}

/** Go's `matchURIConstraint`: the URI's host as a domain; IP hosts cannot be matched. */
function matchUri(uri: string, constraint: string): boolean | string {
  let host: string;
  try {
    host = new URL(uri).hostname;
  } catch {
    return `x509: cannot parse URI ${JSON.stringify(uri)}`;
  }
  if (host === '') return `URI with empty host (${JSON.stringify(uri)}) cannot be matched against constraints`;
  if (host.startsWith('[') || parseIpAddress(host) !== null) {
    return `URI with IP (${JSON.stringify(uri)}) cannot be matched against constraints`;
  }
  return matchDomain(host, constraint);
}

/** Go's `matchIPConstraint`: same family and inside the CIDR. */
function matchIp(ip: string, constraint: string): boolean {
  const [address = '', prefixText = '0'] = constraint.split('/');
  const constraintIsV6 = address.includes(':');
  if (ip.includes(':') !== constraintIsV6) return false;
  const a = parseIpAddress(ip);
  const c = parseIpAddress(address);
  if (!a || !c) return false;
  const prefix = Number(prefixText) + (constraintIsV6 ? 0 : 96);
  for (let bit = 0; bit < prefix; bit++) {
    const mask = 0x80 >> (bit & 7);
    if (((a[bit >> 3] as number) & mask) !== ((c[bit >> 3] as number) & mask)) return false;
  }
  return true;
}

/** Go's `checkNameConstraints` for one name: excluded first, then at least one permitted (if any). */
function checkName(
  nameType: string,
  name: string,
  permitted: readonly string[],
  excluded: readonly string[],
  match: (constraint: string) => boolean | string,
): ChainProblem | null {
  for (const constraint of excluded) {
    const r = match(constraint);
    if (typeof r === 'string') return problem(r);
    if (r) return problem(`${nameType} ${JSON.stringify(name)} is excluded by constraint ${JSON.stringify(constraint)}`);
  }
  if (permitted.length === 0) return null;
  for (const constraint of permitted) {
    const r = match(constraint);
    if (typeof r === 'string') return problem(r);
    if (r) return null;
  }
  return problem(`${nameType} ${JSON.stringify(name)} is not permitted by any constraint`);
}

/**
 * Check `ca`'s name constraints against the SANs of the certificates below it (`chainSoFar`, leaf
 * first). Returns `null` when every name is allowed or `ca` has no constraints.
 */
export function checkNameConstraints(ca: Certificate, chainSoFar: readonly Certificate[]): ChainProblem | null {
  const nc = ca.nameConstraints;
  if (!nc) return null;
  const { permitted, excluded } = nc;
  for (const cert of chainSoFar) {
    if (!cert.extensions.some((e) => e.oid === '2.5.29.17')) continue;
    const sans = cert.subjectAltNames;
    for (const email of sans.email) {
      const mailbox = splitMailbox(email);
      if (!mailbox) return problem(`x509: cannot parse rfc822Name ${JSON.stringify(email)}`);
      const p = checkName('email address', email, permitted.email, excluded.email, (c) => matchEmail(mailbox, c));
      if (p) return p;
    }
    for (const dns of sans.dns) {
      if (!reverseLabels(dns)) return problem(`x509: cannot parse dnsName ${JSON.stringify(dns)}`);
      const p = checkName('DNS name', dns, permitted.dns, excluded.dns, (c) => matchDomain(dns, c));
      if (p) return p;
    }
    for (const uri of sans.uri) {
      const p = checkName('URI', uri, permitted.uri, excluded.uri, (c) => matchUri(uri, c));
      if (p) return p;
    }
    for (const ip of sans.ip) {
      const p = checkName('IP address', ip, permitted.ip, excluded.ip, (c) => matchIp(ip, c));
      if (p) return p;
    }
  }
  return null;
}
