/**
 * `hosts` → subject alternative names with CFSSL's classification (behaviour doc 3.5; cfssl
 * `csr.GenerateDER` and `signer/local.OverrideHosts`): the first rule that matches wins —
 * 1. Go `net.ParseIP` → IP SAN; 2. Go `mail.ParseAddress` → email SAN (bare address, so
 * `John Doe <jd@example.com>` gives `jd@example.com`); 3. Go `url.ParseRequestURI` → URI SAN
 * (absolute URI with a scheme or a string starting with `/`, which also catches `localhost:8080`);
 * 4. otherwise DNS SAN, verbatim. SANs are encoded grouped DNS, email, IP, URI as Go does.
 *
 * The Go parsers are ported as far as classification needs; known approximations: RFC 2047
 * encoded words in display names are not decoded, mail groups (`g: a@b;`) are not recognised,
 * and URIs are kept verbatim except for the scheme, which Go lower-cases.
 *
 * The issuer (request hosts, sign-request `hosts` overrides) and HSM administration (the hosts of
 * a CA's CSR) classify and encode hosts with this, so both agree with CFSSL.
 */
import { derImplicit, derSequence } from './der-writer.js';
import { CsrBadRequestError } from './errors.js';

/** Subject alternative names to encode, grouped as Go groups them. */
export interface SanList {
  dns: string[];
  email: string[];
  /** 4-byte IPv4 or 16-byte IPv6 addresses. */
  ip: Uint8Array[];
  uri: string[];
}

/** An empty SAN list. */
export function emptySanList(): SanList {
  return { dns: [], email: [], ip: [], uri: [] };
}

/** True when the list holds no name at all. */
export function isEmptySanList(sans: SanList): boolean {
  return sans.dns.length + sans.email.length + sans.ip.length + sans.uri.length === 0;
}

// ---------------------------------------------------------------------------------------------
// net.ParseIP

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseIpv4(text: string): number[] | null {
  const match = IPV4.exec(text);
  if (!match) return null;
  const out: number[] = [];
  for (let i = 1; i <= 4; i++) {
    const part = match[i] as string;
    // Go 1.17+ rejects leading zeros (ambiguous octal).
    if (part.length > 1 && part[0] === '0') return null;
    const value = Number(part);
    if (value > 255) return null;
    out.push(value);
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | null {
  if (text.includes('%')) return null; // Go's ParseIP has no zones.
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (part: string, allowIpv4Tail: boolean): number[] | null => {
    if (part === '') return [];
    const groups = part.split(':');
    const words: number[] = [];
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i] as string;
      if (allowIpv4Tail && i === groups.length - 1 && group.includes('.')) {
        const v4 = parseIpv4(group);
        if (!v4) return null;
        words.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
      words.push(parseInt(group, 16));
    }
    return words;
  };
  let words: number[];
  if (halves.length === 2) {
    const head = parseGroups(halves[0] as string, false);
    const tail = parseGroups(halves[1] as string, true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    words = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = parseGroups(text, true);
    if (!all || all.length !== 8) return null;
    words = all;
  }
  const bytes = new Uint8Array(16);
  words.forEach((word, index) => {
    bytes[index * 2] = word >> 8;
    bytes[index * 2 + 1] = word & 0xff;
  });
  return bytes;
}

/**
 * Go's `net.ParseIP` followed by `To4()` as Go's SAN marshalling does: IPv4 (and IPv4-mapped IPv6)
 * as 4 bytes, other IPv6 as 16 bytes; `null` when `text` is not an IP address.
 */
export function parseIpAddress(text: string): Uint8Array | null {
  const v4 = parseIpv4(text);
  if (v4) return Uint8Array.from(v4);
  if (!text.includes(':')) return null;
  const v6 = parseIpv6(text);
  if (!v6) return null;
  const mapped = v6.subarray(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return mapped ? v6.slice(12) : v6;
}

// ---------------------------------------------------------------------------------------------
// net/mail.ParseAddress

class MailParser {
  constructor(
    private readonly text: string,
    public pos = 0,
  ) {}

  empty(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): string {
    return this.text[this.pos] ?? '';
  }

  consume(char: string): boolean {
    if (this.peek() !== char) return false;
    this.pos++;
    return true;
  }

  skipSpace(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }

  /** Skip folding white space and (nested) comments; false on an unterminated comment. */
  skipCfws(): boolean {
    this.skipSpace();
    while (this.peek() === '(') {
      let depth = 0;
      while (!this.empty()) {
        const c = this.text[this.pos++];
        if (c === '\\') this.pos++;
        else if (c === '(') depth++;
        else if (c === ')' && --depth === 0) break;
      }
      if (depth !== 0) return false;
      this.skipSpace();
    }
    return true;
  }

  /** RFC 5322 atext (Go's `isAtext`), with `.` when `dot`, and the specials Go allows when `permissive`. */
  static isAtext(c: string, dot: boolean, permissive: boolean): boolean {
    switch (c) {
      case '.':
        return dot;
      case '(':
      case ')':
      case '[':
      case ']':
      case ';':
      case '@':
      case '\\':
      case ',':
        return permissive;
      case '<':
      case '>':
      case '"':
      case ':':
        return false;
    }
    const code = c.codePointAt(0) ?? 0;
    return (code >= 0x21 && code <= 0x7e) || code >= 0x80;
  }

  atom(dot: boolean, permissive: boolean): string | null {
    const start = this.pos;
    while (!this.empty() && MailParser.isAtext(this.peek(), dot, permissive)) this.pos++;
    const atom = this.text.slice(start, this.pos);
    if (atom === '') return null;
    if (!permissive && (atom.startsWith('.') || atom.endsWith('.') || atom.includes('..'))) return null;
    return atom;
  }

  quotedString(): string | null {
    if (!this.consume('"')) return null;
    let out = '';
    for (;;) {
      if (this.empty()) return null;
      const c = this.text[this.pos++] as string;
      if (c === '"') return out;
      if (c === '\\') {
        if (this.empty()) return null;
        out += this.text[this.pos++];
        continue;
      }
      const code = c.codePointAt(0) ?? 0;
      if (code < 0x20 && c !== '\t') return null;
      out += c;
    }
  }

  addrSpec(): string | null {
    const start = this.pos;
    const fail = (): null => {
      this.pos = start;
      return null;
    };
    this.skipSpace();
    if (this.empty()) return fail();
    let local: string | null;
    if (this.peek() === '"') {
      local = this.quotedString();
      if (local === '') local = null;
    } else {
      local = this.atom(true, false);
    }
    if (local === null || !this.consume('@')) return fail();
    this.skipSpace();
    if (this.empty()) return fail();
    const domain = this.atom(true, false);
    if (domain === null) return fail();
    return `${local}@${domain}`;
  }

  phrase(): boolean {
    let words = 0;
    for (;;) {
      this.skipSpace();
      if (this.empty()) break;
      const word = this.peek() === '"' ? this.quotedString() : this.atom(true, true);
      if (word === null) break;
      words++;
    }
    return words > 0;
  }
}

/**
 * Go's `mail.ParseAddress`: the bare address of `addr-spec` or `display-name <addr-spec>`, `null`
 * when `text` is not a single RFC 5322 address.
 */
export function parseMailAddress(text: string): string | null {
  // Every form (addr-spec or name-addr) contains an addr-spec, hence an `@`.
  if (!text.includes('@')) return null;
  const parser = new MailParser(text);
  parser.skipSpace();
  if (parser.empty()) return null;
  let address = parser.addrSpec();
  if (address !== null) {
    parser.skipSpace();
  } else {
    parser.pos = 0;
    parser.skipSpace();
    if (parser.peek() !== '<' && !parser.phrase()) return null;
    parser.skipSpace();
    if (!parser.consume('<')) return null;
    address = parser.addrSpec();
    if (address === null || !parser.consume('>')) return null;
  }
  if (!parser.skipCfws() || !parser.empty()) return null;
  return address;
}

// ---------------------------------------------------------------------------------------------
// net/url.ParseRequestURI

const HOST_EXTRA = new Set("!$&'()*+,;=:[]<>\"-_.~".split(''));
const USERINFO_EXTRA = new Set("-._:~!$&'()*+,;=%@".split(''));

function isAlnum(c: string): boolean {
  return /^[A-Za-z0-9]$/.test(c);
}

function validEscapes(text: string): boolean {
  return !/%(?![0-9A-Fa-f]{2})/.test(text);
}

function validHost(host: string): boolean {
  let hostPart = host;
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) return false;
    const port = host.slice(close + 1);
    if (port !== '' && !/^:\d*$/.test(port)) return false;
    hostPart = host.slice(0, close + 1);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !/^:\d*$/.test(host.slice(colon))) return false;
  }
  if (!validEscapes(hostPart)) return false;
  for (const c of hostPart) {
    if (c === '%' || c.codePointAt(0)! >= 0x80 || isAlnum(c) || HOST_EXTRA.has(c)) continue;
    return false;
  }
  return true;
}

/**
 * Go's `url.ParseRequestURI` acceptance test. Returns the URI as Go's `URL.String()` would give it
 * for the common cases (scheme lower-cased, rest verbatim), or `null` when Go rejects the string.
 */
export function parseRequestUri(text: string): string | null {
  if (text === '' || /[\x00-\x1f\x7f]/.test(text)) return null;
  if (text === '*') return text;
  let scheme = '';
  let rest = text;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ':') {
      if (i === 0) return null; // "missing protocol scheme"
      scheme = text.slice(0, i);
      rest = text.slice(i + 1);
    }
    break;
  }
  let path = rest;
  const question = path.indexOf('?');
  if (question >= 0) path = path.slice(0, question);
  if (!path.startsWith('/')) {
    // With a scheme, a rootless remainder is an opaque URI (`localhost:8080`, `mailto:x`).
    if (scheme === '') return null;
    return `${scheme.toLowerCase()}:${rest}`;
  }
  if (scheme !== '' && path.startsWith('//')) {
    const afterSlashes = path.slice(2);
    const slash = afterSlashes.indexOf('/');
    const authority = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
    path = slash < 0 ? '' : afterSlashes.slice(slash);
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      for (const c of authority.slice(0, at)) if (!isAlnum(c) && !USERINFO_EXTRA.has(c)) return null;
    }
    if (!validHost(at >= 0 ? authority.slice(at + 1) : authority)) return null;
  }
  if (!validEscapes(path)) return null;
  return scheme === '' ? text : `${scheme.toLowerCase()}:${rest}`;
}

// ---------------------------------------------------------------------------------------------

/** The SAN kind a host string becomes. */
export type HostKind = 'ip' | 'email' | 'uri' | 'dns';

/** Classify one host with CFSSL's rule order (IP, email, URI, DNS). */
export function classifyHost(host: string): { kind: 'ip'; value: Uint8Array } | { kind: 'email' | 'uri' | 'dns'; value: string } {
  const ip = parseIpAddress(host);
  if (ip) return { kind: 'ip', value: ip };
  const email = parseMailAddress(host);
  if (email !== null) return { kind: 'email', value: email };
  const uri = parseRequestUri(host);
  if (uri !== null) return { kind: 'uri', value: uri };
  return { kind: 'dns', value: host };
}

/** Classify every host into a {@link SanList} (input order kept within each kind). */
export function sansFromHosts(hosts: readonly string[] | null | undefined): SanList {
  const sans = emptySanList();
  for (const host of hosts ?? []) {
    const classified = classifyHost(host);
    switch (classified.kind) {
      case 'ip':
        sans.ip.push(classified.value);
        break;
      case 'email':
        sans.email.push(classified.value);
        break;
      case 'uri':
        sans.uri.push(classified.value);
        break;
      case 'dns':
        sans.dns.push(classified.value);
        break;
    }
  }
  return sans;
}

const encoder = new TextEncoder();

function ia5(name: string): Uint8Array {
  // Go refuses to marshal non-ASCII names: `x509: "<name>" cannot be encoded as an IA5String`.
  for (let i = 0; i < name.length; i++) {
    if (name.charCodeAt(i) > 0x7f) throw new CsrBadRequestError(`x509: ${JSON.stringify(name)} cannot be encoded as an IA5String`);
  }
  return encoder.encode(name);
}

/** DER of the SubjectAltName extension value (GeneralNames), grouped DNS, email, IP, URI. */
export function encodeSubjectAltNames(sans: SanList): Uint8Array {
  const names: Uint8Array[] = [];
  for (const dns of sans.dns) names.push(derImplicit(2, ia5(dns), false));
  for (const email of sans.email) names.push(derImplicit(1, ia5(email), false));
  for (const ip of sans.ip) names.push(derImplicit(7, ip, false));
  for (const uri of sans.uri) names.push(derImplicit(6, ia5(uri), false));
  return derSequence(...names);
}

/**
 * A {@link SanList} from parsed SubjectAltNames (x509-core's `SubjectAltNames`, IP addresses as
 * text): what a CSR's SANs give when its certificate is built. Unparsable IP texts are dropped.
 */
export function sanListFromParsed(sans: { dns: readonly string[]; email: readonly string[]; ip: readonly string[]; uri: readonly string[] }): SanList {
  const ip: Uint8Array[] = [];
  for (const text of sans.ip) {
    const bytes = parseIpAddress(text);
    if (bytes) ip.push(bytes);
  }
  return { dns: [...sans.dns], email: [...sans.email], ip, uri: [...sans.uri] };
}
