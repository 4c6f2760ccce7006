/**
 * Server-side request forgery guard for the two places certsmith connects somewhere a *client*
 * chose: AIA "CA Issuers" fetches (the URL is inside a submitted certificate, RFC 5280 4.2.2.1) and
 * remote-mode bundling (`domain`/`ip` of a bundle request, CFSSL doc 2.10). CFSSL has no such guard:
 * `cfssl serve` fetches any URL and dials any address, so anyone who can reach the API can make it
 * probe loopback services, the private network and cloud metadata endpoints (169.254.169.254).
 *
 * The guard judges **resolved addresses**, never names: the AIA fetcher calls it for every DNS answer
 * on every redirect hop, and `fetchPeerCertificates` for every answer before it connects, so a public
 * name that resolves (or rebinds, or redirects) to a private address is refused too. IPv4-mapped
 * (`::ffff:10.0.0.1`), NAT64 (`64:ff9b::a00:1`) and 6to4 (`2002:0a00:0001::`) forms are judged by the
 * IPv4 address they embed.
 *
 * Remote *signer* URLs (multiroot `remotes`) are not guarded: they come from the operator's config,
 * not from requests, and often point at private networks on purpose.
 */
import { BlockList, isIP } from 'node:net';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** Options of {@link createNetworkGuard}. */
export interface NetworkGuardOptions {
  /** Allow every address (CFSSL's behaviour). `certsmith serve --allow-private-networks`. Default false. */
  allowPrivateNetworks?: boolean;
  /**
   * Ranges that are allowed although they are not public, e.g. `["10.20.0.0/16", "fd00:1::/64"]`. A
   * bare address means that one address (/32, /128). IPv4 ranges also allow the IPv4-mapped, NAT64
   * and 6to4 forms of their addresses.
   */
  allowCidrs?: readonly string[];
}

/** Why an address is not public: a row of {@link SPECIAL_PURPOSE_RANGES}. */
export interface AddressRange {
  /** The range, e.g. `127.0.0.0/8`. */
  cidr: string;
  /** What it is, e.g. `loopback`. */
  kind: AddressKind;
}

/** Kinds of non-public ranges (IANA special-purpose address registries, RFC 6890). */
export type AddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared (CGNAT)'
  | 'link-local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'site-local'
  | 'discard-only';

/** What {@link classifyAddress} found. */
export interface AddressClassification {
  /** The address as given (zone removed). */
  address: string;
  /** The IPv4 address an IPv4-mapped / NAT64 / 6to4 address embeds, else `null`. */
  embeddedIpv4: string | null;
  /** How it embeds it. */
  embedding: 'IPv4-mapped' | 'NAT64' | '6to4' | null;
  /** The non-public range it is in, or `null` for a public address. */
  range: AddressRange | null;
}

/**
 * Non-public ranges, most specific first (the first match names the range in messages). IPv4:
 * RFC 1122 (0/8), RFC 1918, RFC 6598 (CGNAT), RFC 3927 (link-local, cloud metadata), RFC 5736/6890,
 * RFC 5737 (documentation), RFC 2544 (benchmarking), RFC 5771 (multicast), RFC 1112 (240/4, with
 * the limited broadcast address). IPv6: RFC 4291 (unspecified, loopback, IPv4-compatible, link-local,
 * multicast), RFC 4193 (unique local), RFC 3879 (site-local), RFC 6666 (discard), RFC 3849
 * (documentation), RFC 8215 (local-use NAT64).
 */
export const SPECIAL_PURPOSE_RANGES: readonly AddressRange[] = [
  { cidr: '0.0.0.0/32', kind: 'unspecified' },
  { cidr: '0.0.0.0/8', kind: 'reserved' },
  { cidr: '10.0.0.0/8', kind: 'private' },
  { cidr: '100.64.0.0/10', kind: 'shared (CGNAT)' },
  { cidr: '127.0.0.0/8', kind: 'loopback' },
  { cidr: '169.254.0.0/16', kind: 'link-local' },
  { cidr: '172.16.0.0/12', kind: 'private' },
  { cidr: '192.0.0.0/24', kind: 'reserved' },
  { cidr: '192.0.2.0/24', kind: 'documentation' },
  { cidr: '192.168.0.0/16', kind: 'private' },
  { cidr: '198.18.0.0/15', kind: 'benchmarking' },
  { cidr: '198.51.100.0/24', kind: 'documentation' },
  { cidr: '203.0.113.0/24', kind: 'documentation' },
  { cidr: '224.0.0.0/4', kind: 'multicast' },
  { cidr: '255.255.255.255/32', kind: 'broadcast' },
  { cidr: '240.0.0.0/4', kind: 'reserved' },
  { cidr: '::/128', kind: 'unspecified' },
  { cidr: '::1/128', kind: 'loopback' },
  { cidr: '::/96', kind: 'reserved' },
  { cidr: '64:ff9b:1::/48', kind: 'private' },
  { cidr: '100::/64', kind: 'discard-only' },
  { cidr: '2001:db8::/32', kind: 'documentation' },
  { cidr: 'fc00::/7', kind: 'private' },
  { cidr: 'fe80::/10', kind: 'link-local' },
  { cidr: 'fec0::/10', kind: 'site-local' },
  { cidr: 'ff00::/8', kind: 'multicast' },
];

/** A parsed CIDR. */
export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** An `allowCidrs` entry or an address to classify is not an IP address / CIDR (400: a bad value was passed). */
export class InvalidAddressError extends CertsmithError {
  constructor(message: string) {
    super(ErrorCode.BadRequest, message);
  }
}

/**
 * A connection was refused because its address is not public: CFSSL's dial-failure code 6000, with a
 * message naming the target, the address, its range and how to allow it. Never retried.
 */
export class PrivateNetworkRefusedError extends CertsmithError {
  /** URL or `host:port` that was to be fetched or dialled. */
  readonly target: string;
  /** The refused address. */
  readonly address: string;
  /** The range it falls in. */
  readonly range: AddressRange;

  constructor(target: string, classification: AddressClassification & { range: AddressRange }) {
    const { address, embeddedIpv4, embedding, range } = classification;
    const what = embeddedIpv4 === null ? `${range.kind} address` : `${embedding} form of the ${range.kind} address ${embeddedIpv4}`;
    const article = /^(?:[aeiou]|IPv4)/i.test(what) ? 'an' : 'a';
    const single = embeddedIpv4 ?? address;
    super(
      ErrorCode.DialFailed,
      `refused to connect to ${target}: ${address} is ${article} ${what} (${range.cidr}); ` +
        'certsmith does not connect to non-public addresses on behalf of requests. To allow it, start the server ' +
        `with --allow-private-networks or add a range to "allowCidrs" in the config (e.g. "${single}/${single.includes(':') ? 128 : 32}")`,
    );
    this.target = target;
    this.address = address;
    this.range = range;
  }
}

/**
 * A guard: call it with the target and a resolved address. Usable as the AIA fetcher's
 * `fetchGuard` and as `fetchPeerCertificates`'s `guard`.
 */
export interface NetworkGuard {
  /**
   * Allow (`true`) or refuse — by **throwing** {@link PrivateNetworkRefusedError}, so the refusal
   * reaches logs and clients with the address and the fix (returning `false` would only say
   * "refused"). `resolvedAddress` `null` means a proxy resolves the name: allowed, the proxy decides.
   */
  (target: URL | string, resolvedAddress: string | null): true;
  /** Whether `address` may be connected to (no throw). Non-IP text is never allowed. */
  isAllowed(address: string): boolean;
  /** The options in effect (allow-list normalised). */
  readonly options: { allowPrivateNetworks: boolean; allowCidrs: readonly string[] };
}

/**
 * Parse `a.b.c.d/n`, `v6::/n` or a bare address (= /32 or /128).
 * @throws {InvalidAddressError} naming the value
 */
export function parseCidr(text: string): Cidr {
  if (typeof text !== 'string') throw new InvalidAddressError(`allowCidrs entries must be strings, got ${typeof text}`);
  const slash = text.indexOf('/');
  const address = (slash < 0 ? text : text.slice(0, slash)).trim();
  const family = isIP(address);
  if (family === 0) throw new InvalidAddressError(`allowCidrs: ${JSON.stringify(text)} is not an IP address or CIDR`);
  const max = family === 4 ? 32 : 128;
  const prefixText = slash < 0 ? String(max) : text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
    throw new InvalidAddressError(`allowCidrs: ${JSON.stringify(text)} has an invalid prefix length (0–${max} for IPv${family})`);
  }
  return { address, prefix: Number(prefixText), family: family === 4 ? 'ipv4' : 'ipv6' };
}

function addToList(list: BlockList, cidr: Cidr): void {
  list.addSubnet(cidr.address, cidr.prefix, cidr.family);
}

/**
 * {@link SPECIAL_PURPOSE_RANGES} as one `BlockList` each, made on the first classification: every
 * thread that runs bundle tasks imports this module at start-up, and most never judge an address
 * (docs/performance.md, start-up pass 3).
 */
let rangeLists: ReadonlyArray<{ range: AddressRange; list: BlockList }> | undefined;

function specialPurposeLists(): ReadonlyArray<{ range: AddressRange; list: BlockList }> {
  rangeLists ??= SPECIAL_PURPOSE_RANGES.map((range) => {
    const list = new BlockList();
    addToList(list, parseCidr(range.cidr));
    return { range, list };
  });
  return rangeLists;
}

/** 16 bytes of an IPv6 address (validated by `isIP` first; no zone). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address;
  const bytes = new Uint8Array(16);
  // A dotted IPv4 tail (`::ffff:1.2.3.4`) is two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (dotted) {
    const octets = (dotted[1] as string).split('.').map(Number);
    tail = [((octets[0] as number) << 8) | (octets[1] as number), ((octets[2] as number) << 8) | (octets[3] as number)];
    text = text.slice(0, -(dotted[1] as string).length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const parseGroups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const doubleColon = text.indexOf('::');
  let groups: number[];
  if (doubleColon >= 0) {
    const head = parseGroups(text.slice(0, doubleColon));
    const rest = parseGroups(text.slice(doubleColon + 2));
    const back = [...rest, ...tail];
    groups = [...head, ...new Array<number>(8 - head.length - back.length).fill(0), ...back];
  } else {
    groups = [...parseGroups(text), ...tail];
  }
  groups.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}

const dottedQuad = (bytes: Uint8Array, at: number): string => Array.from(bytes.subarray(at, at + 4)).join('.');

/** The IPv4 address an IPv6 address stands for, when it embeds one that routes to IPv4. */
function embeddedIpv4(address: string): { ipv4: string; embedding: 'IPv4-mapped' | 'NAT64' | '6to4' } | null {
  const bytes = ipv6Bytes(address);
  const zeros = (from: number, to: number): boolean => bytes.subarray(from, to).every((b) => b === 0);
  // ::ffff:0:0/96 (RFC 4291 2.5.5.2): a socket to it is an IPv4 socket.
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return { ipv4: dottedQuad(bytes, 12), embedding: 'IPv4-mapped' };
  // 64:ff9b::/96 (RFC 6052): a NAT64 gateway forwards it to the embedded IPv4 address.
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) {
    return { ipv4: dottedQuad(bytes, 12), embedding: 'NAT64' };
  }
  // 2002::/16 (RFC 3056): 6to4 relays tunnel it to the embedded IPv4 address.
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { ipv4: dottedQuad(bytes, 2), embedding: '6to4' };
  return null;
}

function findRange(address: string, family: 'ipv4' | 'ipv6'): AddressRange | null {
  for (const { range, list } of specialPurposeLists()) {
    // BlockList also matches IPv4 rules against IPv4-mapped IPv6 addresses (and the reverse); only
    // the rule of the address's own family names the range.
    if (range.cidr.includes(':') !== (family === 'ipv6')) continue;
    if (list.check(address, family)) return range;
  }
  return null;
}

/**
 * Classify an IP address: its non-public range (through the IPv4 address it embeds, for mapped,
 * NAT64 and 6to4 forms), or `null` when public.
 * @throws {InvalidAddressError} when `address` is not an IP address (the guard then refuses)
 */
export function classifyAddress(address: string): AddressClassification {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) throw new InvalidAddressError(`${JSON.stringify(address)} is not an IP address`);
  if (family === 4) return { address: bare, embeddedIpv4: null, embedding: null, range: findRange(bare, 'ipv4') };
  const embedded = embeddedIpv4(bare);
  if (embedded !== null) {
    const range = findRange(embedded.ipv4, 'ipv4');
    if (range !== null || embedded.embedding !== '6to4') {
      return { address: bare, embeddedIpv4: embedded.ipv4, embedding: embedded.embedding, range };
    }
  }
  return { address: bare, embeddedIpv4: null, embedding: null, range: findRange(bare, 'ipv6') };
}

/**
 * Create the private-network guard. Every address in {@link SPECIAL_PURPOSE_RANGES} (loopback,
 * RFC 1918 and unique-local, link-local, CGNAT, unspecified, multicast, broadcast, reserved,
 * documentation) is refused, also in IPv4-mapped, NAT64 and 6to4 forms, unless `allowPrivateNetworks`
 * is set or the address (or the IPv4 address it embeds) is inside one of `allowCidrs`.
 *
 * ```ts
 * const guard = createNetworkGuard({ allowCidrs: ['10.20.0.0/16'] });
 * const aia = createAiaFetcher({ fetchGuard: guard });
 * await fetchPeerCertificates({ domain: 'example.com', guard });
 * ```
 * @throws {InvalidAddressError} for a malformed `allowCidrs` entry (validate config at startup with this)
 */
export function createNetworkGuard(options: NetworkGuardOptions = {}): NetworkGuard {
  const allowPrivateNetworks = options.allowPrivateNetworks === true;
  const cidrs = (options.allowCidrs ?? []).map(parseCidr);
  const allowList = new BlockList();
  for (const cidr of cidrs) addToList(allowList, cidr);

  const allowed = (classification: AddressClassification): boolean => {
    if (allowPrivateNetworks || classification.range === null) return true;
    const { address, embeddedIpv4: v4 } = classification;
    return allowList.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6') || (v4 !== null && allowList.check(v4, 'ipv4'));
  };

  const guard = ((target: URL | string, resolvedAddress: string | null): true => {
    if (resolvedAddress === null || allowPrivateNetworks) return true;
    const name = typeof target === 'string' ? target : target.href;
    const classification = classifyAddress(resolvedAddress);
    if (allowed(classification)) return true;
    throw new PrivateNetworkRefusedError(name, classification as AddressClassification & { range: AddressRange });
  }) as NetworkGuard;

  Object.defineProperties(guard, {
    isAllowed: {
      value: (address: string): boolean => {
        try {
          return allowed(classifyAddress(address));
        } catch {
          return false;
        }
      },
    },
    options: {
      value: Object.freeze({
        allowPrivateNetworks,
        allowCidrs: Object.freeze(cidrs.map((cidr) => `${cidr.address}/${cidr.prefix}`)),
      }),
    },
  });
  return guard;
}
