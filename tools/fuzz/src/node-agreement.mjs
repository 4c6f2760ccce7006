// @ts-check
/**
 * The differential oracle: wherever Node's `X509Certificate` (OpenSSL) accepts an input, certsmith's
 * parsed serial, names, validity, public key and extensions must agree with it. Each way they may
 * differ is an *explained* difference (`EXPLAINED` below, and the table in
 * packages/x509-core/README.md); anything else is a finding.
 */
import { X509Certificate, createPublicKey } from 'node:crypto';
import { decodeOid, derImplicit, derOid, derSequence } from '@certsmith/x509-core';
import { isIP } from 'node:net';
import { readNodes, writeNodes } from './mutators.mjs';

/**
 * Why certsmith refuses a certificate OpenSSL accepts: each is a rule of Go's `x509.ParseCertificate`
 * (what CFSSL accepts), matched on the DER reader's reason (the 1003's `cause`).
 */
export const STRICTER_THAN_OPENSSL = [
  { id: 'ber-encoding', reason: /non-minimal length|indefinite length|length field too long|non-minimal OBJECT IDENTIFIER arc|high-tag-number form|is not constructed|expected .*got tag|empty INTEGER|BOOLEAN must/, why: 'BER forms (non-minimal lengths and arcs, indefinite lengths, constructed strings, other BOOLEAN values): DER only, as Go' },
  { id: 'bit-string-padding', reason: /BIT STRING/, why: 'BIT STRING with non-zero padding bits or an unused-bit count over 7: refused, as Go' },
  { id: 'invalid-utf8', reason: /invalid UTF-8|BMPString of odd length|UniversalString/, why: 'UTF8String that is not UTF-8, BMPString of odd length, UniversalString out of range: refused, as Go' },
  { id: 'time-content', reason: /time|UTCTime|GeneralizedTime|digit/, why: 'times with out-of-range fields (month 13, 31 April, second 60), missing zone or seconds, or stray characters: refused, as Go; OpenSSL does not check time content when parsing' },
  { id: 'signature-algorithm-mismatch', reason: /inner and outer signature algorithm/, why: 'TBSCertificate.signature different from signatureAlgorithm (RFC 5280 4.1.1.2): refused, as Go' },
  { id: 'duplicate-extension', reason: /duplicate extension/, why: 'the same extension twice (RFC 5280 4.2): refused, as Go' },
  { id: 'malformed-known-extension', reason: /KeyUsage|BasicConstraints|ExtKeyUsage|SubjectAltName|AuthorityKeyIdentifier|SubjectKeyIdentifier|AuthorityInfoAccess|CRLDistributionPoints|CertificatePolicies|NameConstraints|GeneralSubtree|DistributionPoint|AccessDescription|PolicyInformation|KeyPurposeId|name constraint|IP constraint|IP address of length|is not IA5|empty name constraints|accessMethod|policyIdentifier|Extension|extnID|extnValue|trailing data/, why: 'a malformed value of an extension Go decodes (SAN, key usage, basic constraints, EKU, AIA, CRL DP, policies, name constraints, key identifiers): refused, as Go; OpenSSL decodes extensions lazily and accepts the certificate' },
  { id: 'public-key-content', reason: /RSA modulus|RSA exponent|RSAPublicKey|modulus|publicExponent|EC point|Ed25519 public key/, why: 'public keys Go refuses (RSA modulus or exponent not positive or malformed, Ed25519 key not 32 bytes, EC point encoding broken): refused, as Go' },
  { id: 'version', reason: /certificate version|INTEGER too large/, why: 'version other than v1–v3 (RFC 5280 4.1.2.1): refused, as Go' },
  { id: 'structure', reason: /missing|trailing data|truncated|runs past|SEQUENCE|AlgorithmIdentifier|SPKI/, why: 'fields missing, extra or out of order inside the structures: refused, as Go' },
  { id: 'nesting', reason: /DER nesting too deep/, why: 'more than 32 levels of nesting: refused (no certificate needs more than about 10)' },
  { id: 'oid', reason: /OBJECT IDENTIFIER/, why: 'empty or truncated OBJECT IDENTIFIER: refused, as Go' },
];

/** Short names OpenSSL prints in `X509Certificate.subject` (only names made of these are compared text-wise). */
const SHORT_NAMES = /** @type {Record<string, string>} */ ({
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '1.2.840.113549.1.9.1': 'emailAddress',
});

/** RFC 2253 escaping as OpenSSL applies it with ESC_2253 | ESC_CTRL (Node's flags). @param {string} value */
function escape2253(value) {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = /** @type {string} */ (value[i]);
    const code = c.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) out += `\\${code.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (',+"\\<>;'.includes(c) || (i === 0 && (c === '#' || c === ' ')) || (i === value.length - 1 && c === ' ')) out += `\\${c}`;
    else out += c;
  }
  return out;
}

/**
 * Our RDNs the way Node prints a name, or `null` when the name cannot be compared text-wise (an
 * attribute OpenSSL may name differently, a non-string value, text outside printable ASCII).
 * @param {{ oid: string, value: string }[][]} rdns
 */
function nodeStyleName(rdns) {
  const lines = [];
  for (const rdn of rdns) {
    const parts = [];
    for (const atv of rdn) {
      const name = SHORT_NAMES[atv.oid];
      if (name === undefined || atv.value.startsWith('#') || !/^[\x20-\x7e]*$/.test(atv.value)) return null;
      parts.push(`${name}=${escape2253(atv.value)}`);
    }
    lines.push(parts.join(' + '));
  }
  return lines.join('\n');
}

/** Node's serial text (`-11D4…` for negative) as a bigint. @param {string} text */
function serialFromNode(text) {
  return text.startsWith('-') ? -BigInt(`0x${text.slice(1)}`) : BigInt(`0x${text}`);
}

/** Our two's-complement serial hex as a bigint. @param {string} hex */
function serialFromHex(hex) {
  if (hex === '') return 0n;
  const unsigned = BigInt(`0x${hex}`);
  return Number.parseInt(hex.slice(0, 2), 16) & 0x80 ? unsigned - (1n << BigInt(hex.length * 4)) : unsigned;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** OpenSSL's `ASN1_TIME_print` text (`Nov 25 23:45:00 2026 GMT`) → ms, or NaN. @param {string} text */
function parseOpensslTime(text) {
  const match = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d)(?:\.\d+)? (\d+) GMT$/.exec(text);
  if (match === null) return Number.NaN;
  const date = new Date(0);
  date.setUTCFullYear(Number(match[6]), MONTHS.indexOf(/** @type {string} */ (match[1])), Number(match[2]));
  date.setUTCHours(Number(match[3]), Number(match[4]), Number(match[5]), 0);
  return date.getTime();
}

/** Split Node's `subjectAltName` (`DNS:a, IP Address:1.2.3.4, DNS:"a, b"`) into [kind, value] pairs. @param {string} text */
function splitSans(text) {
  /** @type {[string, string][]} */
  const out = [];
  const pattern = /([^:,]+(?: [^:,]+)?):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/gy;
  for (let match = pattern.exec(text); match !== null && match[0] !== ''; match = pattern.exec(text)) {
    const raw = /** @type {string} */ (match[2]);
    out.push([/** @type {string} */ (match[1]), raw.startsWith('"') ? JSON.parse(raw) : raw]);
  }
  return out;
}

/** Go-style IP text from Node's (long IPv6, IPv4-mapped shown as IPv6). @param {string} ip */
function canonicalIp(ip) {
  if (isIP(ip) !== 6) return ip;
  const host = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const high = Number.parseInt(/** @type {string} */ (mapped[1]), 16);
    const low = Number.parseInt(/** @type {string} */ (mapped[2]), 16);
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return host;
}

/**
 * @typedef {{ field: string, ours: unknown, node: unknown }} Disagreement
 * @typedef {{ nodeAccepts: boolean, explained: string[], unexplained: Disagreement[] }} AgreementResult
 */

/**
 * Compare a certificate parse with Node's. `ours` is the parsed certificate, or the 1003 error.
 * @param {Uint8Array} der
 * @param {import('@certsmith/x509-core').Certificate | null} ours
 * @param {unknown} error the error certsmith threw, when `ours` is null
 * @returns {AgreementResult}
 */
export function compareWithNode(der, ours, error) {
  /** @type {X509Certificate} */
  let node;
  try {
    node = new X509Certificate(der);
  } catch {
    return { nodeAccepts: false, explained: ours === null ? [] : ['node-refuses'], unexplained: [] };
  }
  /** @type {string[]} */
  const explained = [];
  /** @type {Disagreement[]} */
  const unexplained = [];
  if (ours === null) {
    const cause = /** @type {{ cause?: { message?: string } }} */ (error).cause?.message ?? String(error);
    const rule = STRICTER_THAN_OPENSSL.find((candidate) => candidate.reason.test(cause));
    if (rule) explained.push(`refused:${rule.id}`);
    else unexplained.push({ field: 'acceptance', ours: cause, node: 'accepted' });
    return { nodeAccepts: true, explained, unexplained };
  }
  /** @param {string} field @param {unknown} a @param {unknown} b */
  const same = (field, a, b) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) unexplained.push({ field, ours: a, node: b });
  };

  same('serial', serialFromHex(ours.serialNumberHex).toString(), serialFromNode(node.serialNumber).toString());

  for (const [field, ourDate, nodeText] of /** @type {const} */ ([['notBefore', ours.notBefore, node.validFrom], ['notAfter', ours.notAfter, node.validTo]])) {
    const nodeTime = parseOpensslTime(nodeText);
    // OpenSSL prints "Bad time value" for forms Go accepts (offsets, no seconds): nothing to compare.
    if (Number.isNaN(nodeTime)) explained.push('time-not-printable-by-openssl');
    else same(field, Math.floor(ourDate.getTime() / 1000) * 1000, nodeTime);
  }

  for (const [field, name, nodeText] of /** @type {const} */ ([['subject', ours.subject, node.subject], ['issuer', ours.issuer, node.issuer]])) {
    // An RDN with no attribute (an empty SET) is kept as an empty RDN; OpenSSL prints nothing for it.
    const rdns = name.rdns.filter((rdn) => rdn.length > 0);
    if (rdns.length !== name.rdns.length) explained.push('empty-rdn');
    const text = nodeStyleName(rdns);
    // Node gives no text at all for names OpenSSL cannot print (e.g. a value it cannot convert).
    if (nodeText === undefined || nodeText === null) explained.push('name-not-printable-by-openssl');
    else if (text !== null) same(field, text, nodeText);
    else {
      explained.push('name-compared-by-count');
      // Every RDN is one line (control characters are escaped by OpenSSL, so lines split RDNs).
      same(`${field} RDN count`, rdns.length, nodeText === '' ? 0 : nodeText.split('\n').length);
    }
  }

  let nodeKey = null;
  try {
    nodeKey = node.publicKey;
  } catch {
    explained.push('public-key-unsupported-by-node');
  }
  if (nodeKey !== null) {
    const nodeSpki = nodeKey.export({ type: 'spki', format: 'der' });
    if (!nodeSpki.equals(Buffer.from(ours.publicKey.spki))) {
      // OpenSSL re-encodes some keys (e.g. compressed EC points): compare the key, not the bytes.
      let ourJwk = null;
      try {
        ourJwk = createPublicKey({ key: Buffer.from(ours.publicKey.spki), format: 'der', type: 'spki' }).export({ format: 'jwk' });
      } catch {
        ourJwk = null;
      }
      let nodeJwk = null;
      try {
        nodeJwk = nodeKey.export({ format: 'jwk' });
      } catch {
        nodeJwk = null;
      }
      if (ourJwk !== null && nodeJwk !== null) {
        same('publicKey', ourJwk, nodeJwk);
        explained.push('public-key-reencoded-by-openssl');
      } else unexplained.push({ field: 'publicKey', ours: Buffer.from(ours.publicKey.spki).toString('hex'), node: nodeSpki.toString('hex') });
    }
    const details = nodeKey.asymmetricKeyDetails ?? {};
    if (ours.publicKey.algorithm === 'RSA') same('RSA bits', ours.publicKey.bits, details.modulusLength);
    if (ours.publicKey.algorithm === 'ECDSA' && ours.publicKey.curve !== null && details.namedCurve !== undefined) {
      const curve = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1', 'P-224': 'secp224r1' }[ours.publicKey.curve] ?? ours.publicKey.curve;
      same('curve', curve, details.namedCurve);
    }
  }

  const sans = node.subjectAltName;
  const ourSanCount = ours.subjectAltNames.dns.length + ours.subjectAltNames.email.length + ours.subjectAltNames.ip.length + ours.subjectAltNames.uri.length;
  if ((sans === undefined || sans === null) && ourSanCount > 0 && sanAgreesWhenRebuilt(der, ours)) {
    // OpenSSL drops the whole SAN when one GeneralName does not decode (a broken otherName or
    // dirName); Go and certsmith skip the forms they do not use and keep DNS/email/IP/URI. Proven
    // by rebuilding the SAN from what certsmith read: Node then prints exactly those.
    explained.push('openssl-drops-undecodable-san');
    return finishExtensions();
  }
  const theirs = { dns: /** @type {string[]} */ ([]), email: /** @type {string[]} */ ([]), ip: /** @type {string[]} */ ([]), uri: /** @type {string[]} */ ([]) };
  if (sans !== undefined) {
    for (const [kind, value] of splitSans(sans)) {
      if (kind === 'DNS') theirs.dns.push(value);
      else if (kind === 'email') theirs.email.push(value);
      else if (kind === 'URI') theirs.uri.push(value);
      else if (kind === 'IP Address') theirs.ip.push(canonicalIp(value));
    }
  }
  same('subjectAltName', ours.subjectAltNames, theirs);
  return finishExtensions();

  /** CA, EKU and AIA comparisons (also run when the SAN difference was explained). */
  function finishExtensions() {
    // X509_check_ca: CA:TRUE, and keyUsage (when present) must allow keyCertSign; v1 certificates are
    // not CAs for Node's `ca` (check_ca answers 3 for them, Node wants 1).
    const keyCertSign = ours.keyUsage === null || (ours.keyUsage & (1 << 5)) !== 0;
    const ourCa = (ours.basicConstraints?.ca ?? false) && keyCertSign;
    if (ourCa !== node.ca && ourCa && caWithoutOtherExtensions(der)) {
      // OpenSSL decodes extensions Go ignores (Netscape cert type, policy constraints, RFC 3779…) or
      // reads leniently (an AuthorityKeyIdentifier with extra content); one it cannot decode marks the
      // whole certificate invalid and X509_check_ca answers 0. Proven by keeping only basic
      // constraints and key usage (all `ca` depends on): then Node agrees.
      explained.push('openssl-invalid-extension-not-ca');
    } else same('ca', ourCa, node.ca);

    const nodeEku = node.keyUsage;
    same('extKeyUsage', ours.extKeyUsage ?? [], nodeEku ?? []);

    const access = node.infoAccess;
    if ((access === undefined || access === null) && ours.ocspUrls.length + ours.caIssuerUrls.length > 0 && aiaAgreesWhenRebuilt(der, ours)) {
      // OpenSSL drops the whole AIA when one AccessDescription does not decode (a location that is not
      // a GeneralName); Go and certsmith skip that entry and keep the URIs. Proven by rebuilding the
      // AIA from the URIs certsmith read: Node then prints exactly those.
      explained.push('openssl-drops-undecodable-aia');
    } else if (access !== undefined && access !== null) {
      const ocsp = [];
      const issuers = [];
      for (const line of access.split('\n')) {
        const match = /^(OCSP|CA Issuers) - URI:(.*)$/.exec(line);
        if (match === null) continue;
        const value = /** @type {string} */ (match[2]).startsWith('"') ? JSON.parse(/** @type {string} */ (match[2])) : match[2];
        (match[1] === 'OCSP' ? ocsp : issuers).push(value);
      }
      same('ocspUrls', ours.ocspUrls, ocsp);
      same('caIssuerUrls', ours.caIssuerUrls, issuers);
    } else {
      same('ocspUrls', ours.ocspUrls, []);
      same('caIssuerUrls', ours.caIssuerUrls, []);
    }
    return { nodeAccepts: true, explained, unexplained };
  }
}

/** The extensions `ca` depends on: basic constraints and key usage. */
const CA_EXTENSIONS = new Set(['2.5.29.19', '2.5.29.15']);

/**
 * Node's `ca` for the same certificate with only basic constraints and key usage left; false when
 * that cannot be built. @param {Uint8Array} der
 */
function caWithoutOtherExtensions(der) {
  const roots = readNodes(der, 0, der.length, 0);
  const tbs = roots?.[0]?.children?.[0]?.children;
  const wrapper = tbs?.find((node) => node.tag === 0xa3)?.children?.[0];
  if (!wrapper?.children) return false;
  wrapper.children = wrapper.children.filter((extension) => {
    const oid = extension.children?.[0];
    if (oid?.tag !== 0x06 || oid.content === null) return true;
    try {
      const encoded = Uint8Array.of(0x06, oid.content.length, ...oid.content);
      return CA_EXTENSIONS.has(decodeOid(encoded, 2, encoded.length));
    } catch {
      return true;
    }
  });
  try {
    return new X509Certificate(writeNodes(/** @type {import('./mutators.mjs').Node[]} */ (roots))).ca;
  } catch {
    return false;
  }
}

/**
 * Does Node print exactly our OCSP and CA Issuers URIs once the AIA holds only them?
 * @param {Uint8Array} der @param {import('@certsmith/x509-core').Certificate} ours
 */
function aiaAgreesWhenRebuilt(der, ours) {
  const roots = readNodes(der, 0, der.length, 0);
  const tbs = roots?.[0]?.children?.[0]?.children;
  const list = tbs?.find((node) => node.tag === 0xa3)?.children?.[0]?.children;
  const aia = list?.find((extension) => extension.children?.[0]?.content !== null && Buffer.from(extension.children?.[0]?.content ?? []).toString('hex') === '2b06010505070101');
  const value = aia?.children?.at(-1);
  if (!value || value.tag !== 0x04) return false;
  const describe = (/** @type {string} */ method, /** @type {string} */ url) => derSequence(derOid(method), derImplicit(6, new TextEncoder().encode(url), false));
  value.content = derSequence(...ours.ocspUrls.map((url) => describe('1.3.6.1.5.5.7.48.1', url)), ...ours.caIssuerUrls.map((url) => describe('1.3.6.1.5.5.7.48.2', url)));
  value.children = null;
  try {
    const text = new X509Certificate(writeNodes(/** @type {import('./mutators.mjs').Node[]} */ (roots))).infoAccess ?? '';
    const expected = [...ours.ocspUrls.map((url) => `OCSP - URI:${url}`), ...ours.caIssuerUrls.map((url) => `CA Issuers - URI:${url}`)];
    return text.split('\n').filter((line) => line !== '').join('\n') === expected.join('\n');
  } catch {
    return false;
  }
}

/**
 * Does Node print exactly our DNS, email, IP and URI names once the SAN holds only them?
 * @param {Uint8Array} der @param {import('@certsmith/x509-core').Certificate} ours
 */
function sanAgreesWhenRebuilt(der, ours) {
  const roots = readNodes(der, 0, der.length, 0);
  const list = roots?.[0]?.children?.[0]?.children?.find((node) => node.tag === 0xa3)?.children?.[0]?.children;
  const san = list?.find((extension) => Buffer.from(extension.children?.[0]?.content ?? []).toString('hex') === '551d11');
  const value = san?.children?.at(-1);
  if (!value || value.tag !== 0x04) return false;
  const text = (/** @type {string} */ name) => new TextEncoder().encode(name);
  const ip = (/** @type {string} */ address) => {
    if (isIP(address) === 4) return Uint8Array.from(address.split('.').map(Number));
    const url = new URL(`http://[${address}]/`).hostname.slice(1, -1);
    const [head = '', tail = ''] = url.split('::');
    const groups = (/** @type {string} */ part) => (part === '' ? [] : part.split(':'));
    const all = [...groups(head), ...Array(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
    return Uint8Array.from(all.flatMap((group) => [Number.parseInt(group, 16) >> 8, Number.parseInt(group, 16) & 0xff]));
  };
  const names = ours.subjectAltNames;
  value.content = derSequence(
    ...names.dns.map((name) => derImplicit(2, text(name), false)),
    ...names.email.map((name) => derImplicit(1, text(name), false)),
    ...names.ip.map((address) => derImplicit(7, ip(address), false)),
    ...names.uri.map((name) => derImplicit(6, text(name), false)),
  );
  value.children = null;
  try {
    const rebuilt = new X509Certificate(writeNodes(/** @type {import('./mutators.mjs').Node[]} */ (roots))).subjectAltName ?? '';
    const theirs = { dns: /** @type {string[]} */ ([]), email: /** @type {string[]} */ ([]), ip: /** @type {string[]} */ ([]), uri: /** @type {string[]} */ ([]) };
    for (const [kind, name] of splitSans(rebuilt)) {
      if (kind === 'DNS') theirs.dns.push(name);
      else if (kind === 'email') theirs.email.push(name);
      else if (kind === 'URI') theirs.uri.push(name);
      else if (kind === 'IP Address') theirs.ip.push(canonicalIp(name));
    }
    return JSON.stringify(theirs) === JSON.stringify(names);
  } catch {
    return false;
  }
}
