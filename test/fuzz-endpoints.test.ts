/**
 * Fuzz / property suite over every POST endpoint of the real built server (21,000 bodies by
 * default): random bytes, truncated and bit-flipped PEM/DER of real certificates, CSRs and keys
 * (made at test time with openssl and node:crypto), deep JSON, huge strings (under and over the
 * 1 MiB body limit), wrong types and wrong nesting for every field, number literals JSON.stringify
 * never writes (`2048.0`, `1e3`, `1e400`, 2^63), repeated keys, request extensions with valid,
 * unencodable and absurd OIDs and values, unicode names, absurd key sizes and very long `hosts`.
 *
 * Every answer must be the CFSSL envelope as `application/json`; a failure is 4xx with a numeric
 * `errors[0].code` (503 + `Retry-After` is allowed when the queue is full); never another 5xx, never a
 * hang (10 s per request), never a connection that ends without a complete answer (a 413 included:
 * the server reads and drops the rest of the body before it closes), and the server must still be
 * healthy and alive at the end, with no `unexpected error` (HTTP 500) line in its log.
 *
 * Typed fields: every field of every body — authsign's inner request too — has its Go type here
 * ({@link TYPED_FIELDS}); a body that is valid but for one wrong-typed field (a number where Go has a
 * string, `2048.0` or `1e3` or 2^63 where it has an int, a string where it has a `*big.Int`, invalid
 * base64 where it has `[]byte`, wrong nesting…) must answer 400 with code 400, as CFSSL's decoder
 * does, with CFSSL's text where it has one (`Unable to parse sign request`). `bundle` and `certinfo`
 * (Go `map[string]string`) answer such bodies 400/400 too, where CFSSL answers 500 code 0.
 *
 * Deterministic: bodies come from `fc.sample` with a fixed seed (set FUZZ_SEED to explore others,
 * FUZZ_BODIES to change the count, FUZZ_DEBUG=1 to print which errors the plausible requests hit,
 * FUZZ_DUMP_DIR to keep the bodies of failures). Hermetic: every `domain` and `ip` that bundle or
 * certinfo could dial names an `.invalid` host or a closed loopback port ({@link hermetic}), and the
 * only AIA URL points at a closed loopback port.
 */
import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { createScratch, makeCsr, makeIntermediateCa, makeRootCa, openssl } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed_2026);
const TOTAL_BODIES = Number(process.env.FUZZ_BODIES ?? 21_000);
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 10_000;
const MAX_BODY = 1024 * 1024;
const AUTH_KEY_HEX = createHash('sha256').update('certsmith fuzz auth key').digest('hex');
const POST_ENDPOINTS = ['bundle', 'newcert', 'newkey', 'sign', 'authsign', 'info', 'certinfo'] as const;
type Endpoint = (typeof POST_ENDPOINTS)[number];

/** What one generated request is: a label for reports, the bytes to send, and what must come back. */
interface Recipe {
  kind: string;
  build(): Buffer;
  /** For bodies whose only fault is a wrong type: the status, code and (when CFSSL has a fixed one) text. */
  expect?: { status: number; code: number; message?: RegExp };
}

/** PEM/DER material made at test time. */
interface Material {
  name: string;
  label: string;
  der: Buffer;
}

interface Outcome {
  index: number;
  endpoint: Endpoint;
  kind: string;
  size: number;
  expect?: Recipe['expect'];
  status?: number;
  contentType?: string;
  retryAfter?: string;
  text?: string;
  error?: string;
}

let scratch: Scratch;
let server: CertsmithProcess & { url: string };
let dataDir = '';
let trustRoot: OpensslCa;
let trustIntermediate: OpensslCa;

// ---------------------------------------------------------------------------------------------
// Material
// ---------------------------------------------------------------------------------------------

const pem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;

function derOf(text: string): Buffer {
  const body = /-----BEGIN [^-]+-----([\s\S]*?)-----END [^-]+-----/.exec(text)?.[1] ?? '';
  return Buffer.from(body.replace(/\s+/g, ''), 'base64');
}

function labelOf(text: string): string {
  return /-----BEGIN ([^-]+)-----/.exec(text)?.[1] ?? 'CERTIFICATE';
}

async function makeMaterial(
  url: string,
  root: OpensslCa,
  intermediate: OpensslCa,
): Promise<{ materials: Material[]; validCsrs: string[]; validCerts: string[]; leafWithKey: { cert: string; key: string; root: string }; leafKeyPem: string }> {
  // A leaf (RSA) signed by the openssl intermediate (the server's --int-bundle), with an AIA URL on
  // a closed loopback port: bundled alone it verifies; with an unknown issuer it goes through AIA.
  const leafKey = scratch.path('leaf-key.pem');
  const leafCsr = scratch.path('leaf.csr');
  const leafCert = scratch.path('leaf.pem');
  const ext = await scratch.write(
    'leaf.ext',
    'subjectAltName=DNS:fuzz.example.com,IP:192.0.2.1\nauthorityInfoAccess=caIssuers;URI:http://127.0.0.1:1/root.cer\nbasicConstraints=critical,CA:FALSE\n',
  );
  await openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', leafKey, '-out', leafCsr, '-subj', '/O=Fuzz/CN=fuzz.example.com']);
  await openssl(['x509', '-req', '-in', leafCsr, '-CA', intermediate.certFile, '-CAkey', intermediate.keyFile, '-set_serial', '0x42', '-days', '10', '-extfile', ext, '-out', leafCert]);
  // The same key under a root nobody trusts: unknown authority, then AIA to the closed port.
  const strayRoot = await makeRootCa(scratch, 'stray-root', 'Stray Root');
  const strayLeaf = scratch.path('stray-leaf.pem');
  await openssl(['x509', '-req', '-in', leafCsr, '-CA', strayRoot.certFile, '-CAkey', strayRoot.keyFile, '-set_serial', '0x43', '-days', '10', '-extfile', ext, '-out', strayLeaf]);
  const ecCsr = await makeCsr(scratch, 'ec-csr', 'ec.fuzz.example.com');
  const unicodeCsr = scratch.path('unicode.csr');
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384', '-nodes', '-keyout', scratch.path('unicode-key.pem'), '-out', unicodeCsr, '-utf8', '-subj', '/O=Ünïcødé ☃/CN=snow☃.example', '-addext', 'subjectAltName=DNS:xn--snow-0p5a.example,email:a@b.example,URI:https://x.example/☃']);

  // A certificate, CSR and key from the server's own development CA.
  const issued = await sendJson(url, 'newcert', { request: { CN: 'dev-leaf.example', hosts: ['dev-leaf.example'], key: { algo: 'ecdsa', size: 256 } } });
  const issuedResult = (JSON.parse(issued.text ?? '{}') as { result?: { certificate: string; certificate_request: string; private_key: string } }).result;
  if (!issuedResult) throw new Error(`newcert for material failed: ${issued.status} ${issued.text}`);
  const devCa = await readFile(`${dataDir}/dev-ca/ca.pem`, 'utf8');

  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const ed = generateKeyPairSync('ed25519');
  const pems: Array<[string, string]> = [
    ['root cert', root.certificatePem],
    ['intermediate cert', intermediate.certificatePem],
    ['stray leaf cert', await readFile(strayLeaf, 'utf8')],
    ['leaf cert', await readFile(leafCert, 'utf8')],
    ['leaf key (PKCS#8)', await readFile(leafKey, 'utf8')],
    ['leaf csr (RSA)', await readFile(leafCsr, 'utf8')],
    ['ec csr', ecCsr.csrPem],
    ['unicode csr', await readFile(unicodeCsr, 'utf8')],
    ['dev CA cert', devCa],
    ['dev leaf cert', issuedResult.certificate],
    ['dev leaf csr', issuedResult.certificate_request],
    ['dev leaf key (SEC1)', issuedResult.private_key],
    ['rsa key (PKCS#1)', rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string],
    ['ec key (SEC1)', ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string],
    ['ed25519 key (PKCS#8)', ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string],
    ['encrypted key', ec.privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'fuzz' }) as string],
    ['rsa public key', rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string],
  ];
  const materials = pems.map(([name, text]) => ({ name, label: labelOf(text), der: derOf(text) }));
  return {
    materials,
    validCsrs: [await readFile(leafCsr, 'utf8'), ecCsr.csrPem, await readFile(unicodeCsr, 'utf8'), issuedResult.certificate_request],
    validCerts: [
      await readFile(leafCert, 'utf8'),
      `${await readFile(leafCert, 'utf8')}${intermediate.certificatePem}`,
      `${intermediate.certificatePem}${await readFile(leafCert, 'utf8')}`,
      await readFile(strayLeaf, 'utf8'),
      issuedResult.certificate,
      devCa,
      root.certificatePem,
    ],
    leafWithKey: { cert: issuedResult.certificate, key: issuedResult.private_key, root: devCa },
    leafKeyPem: await readFile(leafKey, 'utf8'),
  };
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/** Field names per endpoint (CFSSL's JSON names; the Go decoder matches them case-insensitively). */
const FIELDS: Record<Endpoint, readonly string[]> = {
  bundle: ['certificate', 'domain', 'private_key', 'flavor', 'ip'],
  newcert: ['request', 'profile', 'label', 'bundle'],
  newkey: ['request', 'profile', 'label'],
  sign: ['certificate_request', 'hosts', 'subject', 'serial_sequence', 'label', 'profile', 'bundle', 'not_before', 'not_after', 'extensions', 'serial', 'crl_override', 'request'],
  authsign: ['token', 'request', 'timestamp', 'remote_address'],
  info: ['label', 'profile'],
  certinfo: ['certificate', 'domain', 'serial', 'authority_key_id'],
};
const REQUEST_FIELDS = ['CN', 'names', 'hosts', 'key', 'serialnumber', 'ca', 'crl_url', 'delegation_enabled', 'extensions'];
const NAME_FIELDS = ['C', 'ST', 'L', 'O', 'OU', 'SerialNumber', 'E'];

/** Key-name spellings Go's decoder accepts (and some it does not). */
const keySpelling = (name: string): fc.Arbitrary<string> =>
  fc.oneof({ weight: 8, arbitrary: fc.constant(name) }, fc.constant(name.toUpperCase()), fc.constant(name.toLowerCase()), fc.constant(` ${name}`));

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

const weirdStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202eevil.com',
  '☃',
  '😀'.repeat(64),
  'ǅ'.repeat(10),
  'ﷺ',
  'é',
  'e\u0301',
  'x'.repeat(300),
  '%00',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '<script>',
  '"',
  '\\',
  '\r\n',
  'null',
  '-----BEGIN CERTIFICATE-----',
);

const unicodeText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: 'grapheme-composite', maxLength: 20 }),
  weirdStrings,
);

const anyJson = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  fc.constantFrom(null, true, false, 0, -1, 1e308, -1e-308, 2 ** 53 + 1, [], {}, [[]], [null], { '': '' }),
  unicodeText,
);

const hostArb = fc.oneof(
  fc.domain(),
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4Extended(),
  fc.emailAddress(),
  fc.webUrl(),
  unicodeText,
  fc.constantFrom('*.example.com', '*', '*.*.example', '1.2.3.4/24', '::ffff:1.2.3.4', 'xn--', 'xn--zz', 'a..b', '.', 'localhost', 'mailto:x@y', 'spiffe://x/y', '[::1]', 'a@b@c', 'http://[::1', '0x7f.1'),
);

const hostsArb = fc.oneof(
  { weight: 20, arbitrary: fc.array(hostArb, { maxLength: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 10_000 }).map((n) => Array.from({ length: n }, (_, i) => `h${i}.fuzz.example`)) },
  { weight: 1, arbitrary: fc.constant(Array.from({ length: 10_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)) },
  { weight: 2, arbitrary: anyJson },
);

/** Key requests: real algorithms with absurd sizes; valid RSA is only ever 2048 (key generation cost). */
const keyArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ algo: fc.constant('ecdsa'), size: fc.constantFrom(256, 384, 521, 0, 255, 300, -256, 256.5, '256', null, 1e9) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      algo: fc.constant('rsa'),
      size: fc.oneof(
        { weight: 1, arbitrary: fc.constant(2048) },
        { weight: 8, arbitrary: fc.constantFrom(1e9, -1, -2048, 0, 1, 1024, 2047, 8193, 16384, 2 ** 31, 2 ** 53, 1e308, 2048.5, 4096.0001, '2048', '', null, true, [2048], { n: 2048 }) },
        { weight: 4, arbitrary: fc.integer().filter((n) => n < 2048 || n > 8192) },
        { weight: 2, arbitrary: fc.double({ noNaN: true }).filter((n) => !(Number.isInteger(n) && n >= 2048 && n <= 8192)) },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ algo: fc.constantFrom('ed25519', 'RSA', 'ECDSA', 'dsa', 'x25519', '', 'rsa ', 'ecdsa\u0000'), size: anyJson }, { requiredKeys: [] }) },
  { weight: 2, arbitrary: anyJson },
);

/** Any object with `algo: "rsa"` (any key case) and an integer size in (2048, 8192]: cap it (keygen costs seconds). */
function capRsaSizes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(capRsaSizes);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = capRsaSizes(inner);
  const algoKey = Object.keys(out).find((key) => key.toLowerCase() === 'algo');
  if (algoKey !== undefined && out[algoKey] === 'rsa') {
    for (const key of Object.keys(out)) {
      const size = out[key];
      if (key.toLowerCase() === 'size' && typeof size === 'number' && Number.isInteger(size) && size > 2048 && size <= 8192) out[key] = 8193;
    }
  }
  return out;
}


// ---------------------------------------------------------------------------------------------
// Typed fields: the Go type of every field of every body (CFSSL's structs, behaviour doc 1.4, 3.2, 4.1, 4.5)
// ---------------------------------------------------------------------------------------------

/** Go types of request fields, as far as JSON decoding tells them apart. */
type GoKind = 'string' | 'int' | 'bool' | 'strings' | 'struct' | 'structs' | 'base64' | 'bigint' | 'stringMap' | 'ints';

/** A path into a body (strings are keys, numbers array indexes) and the Go type found there. */
type TypedField = readonly [path: readonly (string | number)[], kind: GoKind];

/** `csr.CertificateRequest` (newkey's body, newcert's `request`); `ca` is refused anyway (400). */
const CERTIFICATE_REQUEST_FIELDS: readonly TypedField[] = [
  [['CN'], 'string'],
  [['names'], 'structs'],
  ...(['C', 'ST', 'L', 'O', 'OU', 'E', 'SerialNumber'] as const).map((name): TypedField => [['names', 0, name], 'string']),
  [['names', 0, 'OID'], 'stringMap'],
  [['hosts'], 'strings'],
  [['key'], 'struct'],
  [['key', 'algo'], 'string'],
  [['key', 'size'], 'int'],
  [['ca'], 'struct'],
  [['ca', 'pathlen'], 'int'],
  [['ca', 'pathlenzero'], 'bool'],
  [['ca', 'expiry'], 'string'],
  [['serialnumber'], 'string'],
  [['delegation_enabled'], 'bool'],
  [['extensions'], 'structs'],
  [['extensions', 0, 'id'], 'ints'],
  [['extensions', 0, 'critical'], 'bool'],
  [['extensions', 0, 'value'], 'base64'],
  [['crl_url'], 'string'],
];

/** `signhandler.jsonSignRequest` (`/sign`, and authsign's inner request). */
const SIGN_REQUEST_FIELDS: readonly TypedField[] = [
  [['hostname'], 'string'],
  [['hosts'], 'strings'],
  [['certificate_request'], 'string'],
  [['subject'], 'struct'],
  [['subject', 'CN'], 'string'],
  [['subject', 'names'], 'structs'],
  [['subject', 'names', 0, 'O'], 'string'],
  [['subject', 'names', 0, 'OID'], 'stringMap'],
  [['subject', 'SerialNumber'], 'string'],
  [['profile'], 'string'],
  [['label'], 'string'],
  [['serial'], 'bigint'],
  [['bundle'], 'bool'],
];

/** Every endpoint's typed fields; authsign's `inner` ones are inside its base64 `request`. */
const TYPED_FIELDS: Record<Endpoint, readonly TypedField[]> = {
  newkey: CERTIFICATE_REQUEST_FIELDS,
  newcert: [
    [['request'], 'struct'],
    ...CERTIFICATE_REQUEST_FIELDS.map(([path, kind]): TypedField => [['request', ...path], kind]),
    [['profile'], 'string'],
    [['label'], 'string'],
    [['bundle'], 'bool'],
  ],
  sign: SIGN_REQUEST_FIELDS,
  authsign: [
    [['timestamp'], 'int'],
    [['token'], 'base64'],
    [['request'], 'base64'],
    [['remote_address'], 'base64'],
    ...SIGN_REQUEST_FIELDS.map(([path, kind]): TypedField => [['inner', ...path], kind]),
  ],
  info: [
    [['label'], 'string'],
    [['profile'], 'string'],
  ],
  // Go `map[string]string`: every value, of unknown keys too.
  bundle: (['certificate', 'domain', 'private_key', 'flavor', 'ip', 'unknown_key'] as const).map((key): TypedField => [[key], 'string']),
  certinfo: (['certificate', 'domain', 'serial', 'authority_key_id', 'unknown_key'] as const).map((key): TypedField => [[key], 'string']),
};

/**
 * JSON texts Go refuses for each kind (raw, so that literals such as `2048.0` and `1e3`, which
 * JSON.stringify cannot write, are sent as written). `null` is valid for every kind and is absent.
 */
const WRONG_VALUES: Record<GoKind, readonly string[]> = {
  string: ['1', '-1.5', '0', '2048.0', '1e400', 'true', 'false', '[]', '["x"]', '{}', '{"a":"b"}'],
  int: ['"256"', '""', 'true', '[]', '[256]', '{}', '1.5', '2048.0', '256.0', '1e3', '2.56e2', '-0.0', '9223372036854775808', '-9223372036854775809', '1e400', '-1e400'],
  bool: ['"true"', '"false"', '1', '0', '1.0', '[]', '[true]', '{}'],
  strings: ['"a.example"', '1', 'true', '{}', '{"0":"a"}', '[1]', '[true]', '[["a"]]', '[{}]', '["a",1]', '["a",2048.0]', '[[]]'],
  struct: ['"x"', '""', '1', '1e3', '2048.0', 'true', '[]', '[{}]', '[null]'],
  structs: ['"x"', '1', 'true', '{}', '{"C":"US"}', '[1]', '["x"]', '[[]]', '[true]', '[{}, 1]', '[1e3]'],
  base64: ['1', '1e3', 'true', '[256]', '[-1]', '["a"]', '[1.5]', '[1,2.0]', '{}', '"!!"', '"A"', '"AAA"', '"AA=A"', '"A==="', '"AAAA!"', '"====="'],
  bigint: ['"123"', '"0x10"', '""', 'true', '[]', '{}', '1.5', '1e3', '2048.0', '-0.0', '1e400'],
  stringMap: ['"x"', '1', 'true', '[]', '[["1.2.3","v"]]', '{"1.2.3":1}', '{"1.2.3":true}', '{"1.2.3":{}}', '{"1.2.3":[]}', '{"1.2.3":2048.0}'],
  ints: ['"1.2.3"', '1', 'true', '{}', '[1,"2"]', '[1,2.5]', '[1,2.0]', '[1,1e3]', '[1,true]', '[1,{}]', '[1,[2]]', '[1,9223372036854775808]', '[1,1e400]'],
};

/** Set `value` at `path` in a copy of `body` (`path` must exist up to its last step). */
function withValueAt(body: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let target = copy;
  for (const step of path.slice(0, -1)) target = target[step] as Record<string | number, unknown>;
  target[path.at(-1)!] = value;
  return copy;
}

/** JSON text of `value` where the string {@link RAW} stands for `raw`, written as is. */
const RAW = '\u0000raw\u0000';
const jsonWithRaw = (value: unknown, raw: string): string => JSON.stringify(value).replace(JSON.stringify(RAW), raw);

/** Go's fold match: any case of a key still names the field (only for the struct endpoints). */
function respell(value: unknown, spell: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => respell(item, spell));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [spell(key), respell(inner, spell)]));
}

/** `domain` and `ip` values that reach nothing but this machine: `.invalid` names (RFC 6761), loopback. */
const HERMETIC_DOMAIN = /(?:\.invalid(?::-?\d*)?|^(?:127\.0\.0\.1|localhost|\[::1\]|):1)$|^$/;
const HERMETIC_IP = new Set(['', '127.0.0.1', '::1', '::ffff:127.0.0.1', '127.1', '0.0.0.0']);

/**
 * Keep `bundle` and `certinfo` bodies hermetic: a `domain` (remote mode dials it) or `ip` string
 * that could name a host elsewhere gets `.invalid` appended. Other endpoints never dial.
 */
function hermetic(endpoint: Endpoint, value: unknown): unknown {
  if ((endpoint !== 'bundle' && endpoint !== 'certinfo') || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const body = { ...(value as Record<string, unknown>) };
  if (typeof body['domain'] === 'string' && !HERMETIC_DOMAIN.test(body['domain'])) body['domain'] = `${body['domain']}.invalid`;
  if (typeof body['ip'] === 'string' && !HERMETIC_IP.has(body['ip']) && !body['ip'].endsWith('.invalid')) body['ip'] = `${body['ip']}.invalid`;
  return body;
}

/** Mostly the right type, now and then any JSON value at all. */
const mostly = <T,>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 12, arbitrary: arb }, { weight: 1, arbitrary: anyJson });

const nameArb = fc.dictionary(fc.constantFrom(...NAME_FIELDS).chain(keySpelling), mostly(unicodeText), { maxKeys: 7 });

/** Extension OIDs and values in a certificate request (newcert, newkey): valid, unencodable, absurd. */
const extensionsArb = fc.array(
  fc.record(
    {
      id: fc.oneof(
        { weight: 4, arbitrary: fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 39 }), fc.array(fc.nat(), { maxLength: 6 })).map(([a, b, rest]) => [a, b, ...rest]) },
        fc.constantFrom([7, 1], [3, 0], [1, 40], [0, 99], [1], [], [2], [-1, 2], [1, -2], [2, 2 ** 53], [2, 1e20], [1, 2, 2 ** 31], [2, 999, 2 ** 32, 2 ** 40]),
        fc.array(fc.integer(), { maxLength: 40 }),
        fc.array(fc.nat({ max: 2 ** 31 }), { minLength: 200, maxLength: 400 }),
        anyJson,
      ),
      critical: mostly(fc.boolean()),
      value: fc.oneof(
        { weight: 4, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64')) },
        fc.constantFrom('', 'BQA=', 'AA==', '!!', 'A', 'A===', '====', 'AAAA\nAAAA', Buffer.alloc(60_000, 0x30).toString('base64')),
        anyJson,
      ),
    },
    { requiredKeys: [] },
  ),
  { maxLength: 4 },
);

const certificateRequestArb = fc.record(
  {
    CN: mostly(unicodeText),
    names: mostly(fc.array(nameArb, { maxLength: 4 })),
    hosts: hostsArb,
    key: keyArb,
    serialnumber: mostly(unicodeText),
    ca: fc.oneof({ weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: fc.record({ pathlen: fc.integer(), expiry: unicodeText }, { requiredKeys: [] }) }),
    crl_url: mostly(fc.webUrl()),
    extensions: extensionsArb,
    delegation_enabled: mostly(fc.boolean()),
  },
  { requiredKeys: [] },
).map((request) => {
  // `ca` is refused outright (initca only): keep it rare so requests get further.
  const { ca, ...rest } = request as Record<string, unknown>;
  return Object.keys(request).length % 5 === 0 && ca !== undefined ? request : rest;
});

const profileArb = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('', 'default', 'authed', 'client', 'nope') }, unicodeText, anyJson);
const labelArb = fc.oneof({ weight: 12, arbitrary: fc.constantFrom('', 'default') }, fc.constantFrom('primary', 'x'), unicodeText, anyJson);

/** Mutate real material: truncate, flip bits, re-armor, mislabel, concatenate. */
function mutatedPemArb(materials: readonly Material[]): fc.Arbitrary<string> {
  return fc
    .record({
      material: fc.constantFrom(...materials),
      other: fc.constantFrom(...materials),
      mode: fc.integer({ min: 0, max: 9 }),
      cut: fc.nat(),
      flips: fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
      wrongLabel: fc.constantFrom('CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST', 'PRIVATE KEY', 'EC PRIVATE KEY', 'RSA PRIVATE KEY', 'PKCS7', 'X', ''),
    })
    .map(({ material, other, mode, cut, flips, wrongLabel }) => {
      const text = pem(material.label, material.der);
      const flipped = Buffer.from(material.der);
      for (const bit of flips) flipped[(bit >> 3) % flipped.length]! ^= 1 << (bit & 7);
      switch (mode) {
        case 0:
          return text.slice(0, cut % text.length);
        case 1:
          return pem(material.label, flipped);
        case 2:
          return pem(material.label, material.der.subarray(0, cut % material.der.length));
        case 3:
          return material.der.toString('latin1');
        case 4:
          return material.der.toString('base64');
        case 5: {
          const chars = [...text];
          for (const bit of flips) {
            const at = bit % chars.length;
            chars[at] = String.fromCharCode((chars[at]!.charCodeAt(0) ^ (1 << (bit & 6))) & 0x7f);
          }
          return chars.join('');
        }
        case 6:
          return pem(wrongLabel, material.der);
        case 7:
          return `${text}${pem(other.label, flipped)}`;
        case 8:
          return text.replace(/\n/g, '\r\n').replace('-----\r\n', '-----\r\nProc-Type: 4,ENCRYPTED\r\n\r\n');
        default:
          return text;
      }
    });
}

/** Deep JSON text (not built by JSON.stringify, which would recurse). */
const deepArb = fc
  .record({
    depth: fc.oneof(fc.constant(10_000), fc.integer({ min: 100, max: 150_000 })),
    shape: fc.constantFrom('array', 'object', 'mixed'),
  })
  .map(({ depth, shape }) => {
    if (shape === 'array') return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    if (shape === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return `${'[{"x":'.repeat(depth >> 1)}0${'}]'.repeat(depth >> 1)}`;
  });

/** Where a value goes in an endpoint's body: top-level fields, or nested inside newcert's request. */
function placeArb(endpoint: Endpoint): fc.Arbitrary<(raw: string) => string> {
  const fields = FIELDS[endpoint];
  const top = fc.constantFrom(...fields).map((field) => (raw: string) => `{${JSON.stringify(field)}:${raw}}`);
  if (endpoint === 'newcert' || endpoint === 'newkey') {
    const nested = fc
      .constantFrom('CN', 'names', 'hosts', 'key', 'serialnumber', 'ca', 'extensions')
      .map((field) => (raw: string) => `{"request":{${JSON.stringify(field)}:${raw}}}`);
    const deeper = fc.constantFrom('algo', 'size').map((field) => (raw: string) => `{"request":{"CN":"x","key":{${JSON.stringify(field)}:${raw}}}}`);
    return fc.oneof(top, nested, deeper, fc.constant((raw: string) => `{"request":{"CN":"x","names":[{"O":${raw}}]}}`));
  }
  if (endpoint === 'sign') {
    return fc.oneof(top, fc.constant((raw: string) => `{"certificate_request":"x","subject":{"CN":"x","names":[{"C":${raw}}]}}`));
  }
  return top;
}

function plausibleArb(endpoint: Endpoint, m: Awaited<ReturnType<typeof makeMaterial>>, mutated: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const csrArb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...m.validCsrs) }, mutated);
  const certArb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...m.validCerts) }, mutated);
  const signRequest = fc.record(
    {
      certificate_request: csrArb,
      hosts: hostsArb,
      subject: mostly(fc.record({ CN: mostly(unicodeText), names: mostly(fc.array(nameArb, { maxLength: 3 })), hosts: hostsArb }, { requiredKeys: [] })),
      profile: profileArb,
      label: labelArb,
      serial: mostly(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map((n) => Number(n))),
      not_before: mostly(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
      not_after: mostly(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
      bundle: mostly(fc.boolean()),
    },
    { requiredKeys: ['certificate_request'] },
  );
  switch (endpoint) {
    case 'newcert':
    case 'newkey':
      return fc.record({ request: mostly(certificateRequestArb), profile: profileArb, label: labelArb, bundle: mostly(fc.boolean()) }, { requiredKeys: ['request'] });
    case 'sign':
      return signRequest;
    case 'authsign':
      return fc
        .record({
          inner: fc.oneof(
            { weight: 8, arbitrary: signRequest.map((r) => JSON.stringify({ ...r, profile: 'authed' })) },
            fc.string(),
            fc.constantFrom('{}', 'null', '[]', '{"certificate_request":'),
          ),
          tokenMode: fc.constantFrom('valid', 'valid', 'valid', 'wrong', 'garbage', 'missing', 'type'),
          timestamp: mostly(fc.integer()),
          remote: mostly(fc.base64String()),
        })
        .map(({ inner, tokenMode, timestamp, remote }) => {
          const bytes = Buffer.from(inner);
          const valid = createHmac('sha256', Buffer.from(AUTH_KEY_HEX, 'hex')).update(bytes).digest('base64');
          const token =
            tokenMode === 'valid' ? valid : tokenMode === 'wrong' ? createHmac('sha256', 'nope').update(bytes).digest('base64') : tokenMode === 'garbage' ? '!!not base64!!' : tokenMode === 'type' ? 42 : undefined;
          return { timestamp, remote_address: remote, token, request: bytes.toString('base64') };
        });
    case 'bundle':
      return fc.oneof(
        {
          weight: 2,
          arbitrary: fc.record(
            { certificate: certArb, flavor: fc.constantFrom('ubiquitous', 'optimal', 'force', '') },
            { requiredKeys: ['certificate'] },
          ),
        },
        fc.record(
          {
            certificate: certArb,
            private_key: fc.oneof(fc.constantFrom(m.leafWithKey.key, m.leafKeyPem), mutated, anyJson),
            flavor: mostly(fc.oneof(fc.constantFrom('ubiquitous', 'optimal', 'force', '', 'UBIQUITOUS'), unicodeText)),
            domain: mostly(hostArb),
            ip: mostly(fc.oneof(fc.ipV4(), fc.ipV6(), unicodeText)),
          },
          { requiredKeys: ['certificate'] },
        ),
        // Remote mode, hermetic: names under .invalid (RFC 6761) and closed loopback ports only.
        fc.record(
          {
            domain: fc.oneof(
              fc.constantFrom('127.0.0.1:1', 'localhost:1', '[::1]:1', 'x.invalid', 'x.invalid:0', 'x.invalid:99999', 'x.invalid:-1', ':1', '', 'a b.invalid', '☃.invalid'),
              unicodeText.map((s) => `${s}.invalid`),
              fc.domain().map((d) => `${d}.invalid`),
            ),
            ip: fc.constantFrom('127.0.0.1', '::1', 'not-an-ip.invalid', '', '::ffff:127.0.0.1', '0.0.0.0', '127.1'),
            flavor: unicodeText,
          },
          { requiredKeys: ['domain'] },
        ),
      );
    case 'info':
      return fc.record({ label: labelArb, profile: profileArb }, { requiredKeys: [] });
    case 'certinfo':
      return fc.oneof(
        fc.record({ certificate: certArb }),
        // Hermetic, as bundle's remote mode: `.invalid` names and closed loopback ports only.
        fc.record({ domain: fc.oneof(fc.constantFrom('127.0.0.1:1', 'localhost:1', '[::1]:1', 'x.invalid', 'x.invalid:99999', ''), hostArb.map((host) => `${host}.invalid`), anyJson) }),
        fc.record({ serial: fc.oneof(unicodeText, anyJson), authority_key_id: fc.oneof(unicodeText, anyJson) }, { requiredKeys: [] }),
      );
  }
}

/** Valid bodies of every endpoint, with every typed field present (the base of the typed-field recipes). */
function validBodies(m: Awaited<ReturnType<typeof makeMaterial>>): Record<Endpoint | 'inner', Record<string, unknown>> {
  const certificateRequest = {
    CN: 'typed.fuzz.example',
    names: [{ C: 'US', ST: 'CA', L: 'SF', O: 'Org', OU: 'Unit', E: 'a@typed.fuzz.example', SerialNumber: '1', OID: { '1.2.3.4': 'v' } }],
    hosts: ['typed.fuzz.example'],
    key: { algo: 'ecdsa', size: 256 },
    serialnumber: 'S1',
    delegation_enabled: false,
    extensions: [{ id: [1, 2, 3, 4], critical: false, value: 'BQA=' }],
    crl_url: 'http://crl.fuzz.example/x.crl',
  };
  const signRequest = {
    hostname: '',
    hosts: ['typed.fuzz.example'],
    certificate_request: m.validCsrs[1]!,
    subject: { CN: 'typed', names: [{ O: 'Org', OID: { '1.2.3.4': 'v' } }], SerialNumber: '7' },
    profile: '',
    label: '',
    serial: 5,
    bundle: false,
  };
  return {
    newkey: certificateRequest,
    newcert: { request: certificateRequest, profile: 'default', label: '', bundle: false },
    sign: signRequest,
    inner: { ...signRequest, profile: 'authed' },
    authsign: { timestamp: 1, token: '', request: '', remote_address: Buffer.from('127.0.0.1').toString('base64') },
    info: { label: '', profile: '' },
    bundle: { certificate: m.validCerts[4]!, domain: '', private_key: '', flavor: 'optimal', ip: '', unknown_key: 'x' },
    certinfo: { certificate: m.validCerts[4]!, domain: '', serial: '', authority_key_id: '', unknown_key: '' },
  };
}

/** What CFSSL answers a body whose only fault is a wrong type (behaviour doc 1.4, 4.5): 400, code 400, this text. */
const TYPE_ERROR_TEXT: Record<Endpoint | 'inner', RegExp> = {
  newkey: /^(?:json: cannot unmarshal |illegal base64 data at input byte |ca section only permitted in initca$)/,
  newcert: /^(?:json: cannot unmarshal |illegal base64 data at input byte |ca section only permitted in initca$)/,
  sign: /^Unable to parse sign request$/,
  inner: /^Unable to parse authenticated sign request$/,
  authsign: /^(?:json: cannot unmarshal |illegal base64 data at input byte )/,
  info: /^json: cannot unmarshal /,
  // CFSSL: 500 code 0 with Go's text; certsmith: 400 code 400 naming the field (a deliberate difference).
  bundle: /^\S+ must be a string/,
  certinfo: /^\S+ must be a string/,
};

/** A valid body but for one field, which gets a value of a type Go refuses there. */
function typedFieldArb(endpoint: Endpoint, m: Awaited<ReturnType<typeof makeMaterial>>): fc.Arbitrary<Recipe> {
  const bodies = validBodies(m);
  const authKey = Buffer.from(AUTH_KEY_HEX, 'hex');
  const structEndpoint = endpoint !== 'bundle' && endpoint !== 'certinfo';
  return fc
    .record({ field: fc.constantFrom(...TYPED_FIELDS[endpoint]), pick: fc.nat(), shout: fc.integer({ min: 0, max: 3 }) })
    .map(({ field: [path, kind], pick, shout }) => {
      const raw = WRONG_VALUES[kind][pick % WRONG_VALUES[kind].length]!;
      // Go matches struct keys case-insensitively: now and then every key is upper-cased.
      const spell = (value: unknown): unknown => (structEndpoint && shout === 0 ? respell(value, (key) => key.toUpperCase()) : value);
      const inner = path[0] === 'inner';
      const target = inner ? 'inner' : endpoint;
      const withCa = (body: Record<string, unknown>): Record<string, unknown> => {
        const caAt = path.indexOf('ca');
        if (caAt < 0 || path.length === caAt + 1) return body;
        // A `ca` section for its fields to sit in (any `ca` is refused, 400 too).
        return withValueAt(body, path.slice(0, caAt + 1), { pathlen: 1, pathlenzero: false, expiry: '1h' }) as Record<string, unknown>;
      };
      const fieldPath = inner ? path.slice(1) : path;
      const text = jsonWithRaw(spell(withValueAt(withCa(bodies[target]), fieldPath, RAW)), raw);
      let build: () => Buffer;
      if (endpoint === 'authsign') {
        const innerText = inner ? text : JSON.stringify(bodies.inner);
        const innerBytes = Buffer.from(innerText);
        const outer = { ...bodies.authsign, token: createHmac('sha256', authKey).update(innerBytes).digest('base64'), request: innerBytes.toString('base64') };
        const outerText = inner ? JSON.stringify(spell(outer)) : jsonWithRaw(spell(withValueAt(outer, path, RAW)), raw);
        build = () => Buffer.from(outerText);
      } else {
        build = () => Buffer.from(text);
      }
      return { kind: `typed field (${kind})`, build, expect: { status: 400, code: 400, message: TYPE_ERROR_TEXT[target] } } satisfies Recipe;
    });
}

/** A key repeated in one object with another value: refused whatever the endpoint (CFSSL would decode both). */
function duplicateKeyArb(endpoint: Endpoint, m: Awaited<ReturnType<typeof makeMaterial>>): fc.Arbitrary<Recipe> {
  const bodies = validBodies(m);
  // `/sign` answers every body it cannot read with CFSSL's one text.
  const message = endpoint === 'sign' ? /^Unable to parse sign request$/ : /^duplicate key "\w+" in a JSON object$/;
  return fc.constantFrom(...Object.keys(bodies[endpoint])).map((key) => {
    const text = JSON.stringify(bodies[endpoint]).replace(/^\{/, `{${JSON.stringify(key)}:"first of two",`);
    return { kind: 'duplicate key', build: () => Buffer.from(text), expect: { status: 400, code: 400, message } } satisfies Recipe;
  });
}

/** Number literals JSON.stringify never writes, where numbers (and other things) go. */
function numberLiteralArb(endpoint: Endpoint): fc.Arbitrary<Recipe> {
  const literals = ['2048.0', '256.0', '1e3', '2.56E2', '-0', '-0.0', '0.0000001', '1e400', '-1e400', '9007199254740993', '9223372036854775807', '9223372036854775808', '-9223372036854775809', '123456789012345678901234567890', '1E-400'];
  return fc.tuple(fc.constantFrom(...literals), placeArb(endpoint)).map(([literal, place]) => ({ kind: 'number literal', build: () => Buffer.from(place(literal)) }));
}

function recipesArb(endpoint: Endpoint, m: Awaited<ReturnType<typeof makeMaterial>>): fc.Arbitrary<Recipe> {
  const mutated = mutatedPemArb(m.materials);
  const fields = FIELDS[endpoint];
  const recipe = (kind: string, build: () => Buffer): Recipe => ({ kind, build });
  const structured = (kind: string, arb: fc.Arbitrary<unknown>): fc.Arbitrary<Recipe> =>
    arb.map((value) => recipe(kind, () => json(hermetic(endpoint, capRsaSizes(value)))));

  const randomBytes = fc.uint8Array({ maxLength: 4096 }).map((bytes) => recipe('random bytes', () => Buffer.from(bytes)));
  const wrongTypes = structured(
    'wrong types',
    fc.dictionary(fc.constantFrom(...fields).chain(keySpelling), anyJson, { minKeys: 1, maxKeys: fields.length }),
  );
  const pemInFields = fc
    .record({ field: fc.constantFrom(...fields), value: mutated, extra: fc.dictionary(fc.constantFrom(...fields), fc.oneof(mutated, anyJson), { maxKeys: 2 }) })
    .map(({ field, value, extra }) => recipe('mutated PEM/DER', () => json(hermetic(endpoint, capRsaSizes({ ...extra, [field]: value })))));
  const plausible = structured('plausible', plausibleArb(endpoint, m, mutated));
  const brokenJson = fc
    .record({ value: plausibleArb(endpoint, m, mutated), cut: fc.nat(), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), mode: fc.constantFrom('truncate', 'byte', 'invalid utf-8') })
    .map(({ value, cut, at, byte, mode }) =>
      recipe(`broken JSON (${mode})`, () => {
        const bytes = json(capRsaSizes(value));
        if (mode === 'truncate') return bytes.subarray(0, cut % bytes.length);
        const copy = Buffer.from(bytes);
        copy[at % copy.length] = mode === 'byte' ? byte : 0xc0 | (byte & 1);
        return copy;
      }),
    );
  const deep = fc.tuple(deepArb, placeArb(endpoint), fc.boolean()).map(([raw, place, topLevel]) => recipe('deep JSON', () => Buffer.from(topLevel ? raw : place(raw))));
  const huge = fc
    .record({
      bytes: fc.integer({ min: 64 * 1024, max: 900 * 1024 }),
      unit: fc.constantFrom('A', 'é', '☃', '😀', '\\u0000', '\\"', ' ', '0'),
      place: placeArb(endpoint),
      asArray: fc.boolean(),
    })
    .map(({ bytes, unit, place, asArray }) =>
      recipe('huge string', () => {
        const repeats = Math.floor(bytes / Buffer.byteLength(unit));
        const raw = asArray ? `["${unit.repeat(Math.floor(repeats / 2))}","${unit.repeat(Math.floor(repeats / 2))}"]` : `"${unit.repeat(repeats)}"`;
        return Buffer.from(place(raw));
      }),
    );
  const overLimit = fc
    .record({ extra: fc.integer({ min: 1, max: 512 * 1024 }), place: placeArb(endpoint) })
    .map(({ extra, place }) =>
      recipe('over the body limit', () => {
        const filler = 'B'.repeat(MAX_BODY + extra);
        return Buffer.from(place(`"${filler}"`));
      }),
    );
  const anyDocument = fc.jsonValue({ maxDepth: 4 }).map((value) => recipe('any JSON', () => json(value)));
  const special = fc
    .constantFrom('', ' ', 'null', '[]', '"x"', '1', 'true', '{', '{}', '{"a":1,"a":2}', '\ufeff{}', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', '\u0000')
    .map((text) => recipe('special document', () => Buffer.from(text)));

  return fc.oneof(
    { weight: 8, arbitrary: randomBytes },
    { weight: 14, arbitrary: wrongTypes },
    { weight: 18, arbitrary: typedFieldArb(endpoint, m) },
    { weight: 2, arbitrary: duplicateKeyArb(endpoint, m) },
    { weight: 4, arbitrary: numberLiteralArb(endpoint) },
    { weight: 14, arbitrary: pemInFields },
    { weight: 22, arbitrary: plausible },
    { weight: 8, arbitrary: brokenJson },
    { weight: 4, arbitrary: deep },
    { weight: 2, arbitrary: huge },
    { weight: 1, arbitrary: overLimit },
    { weight: 4, arbitrary: anyDocument },
    { weight: 3, arbitrary: special },
  );
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** POST bytes; never rejects: transport failures and timeouts come back as `error`. */
function send(url: string, endpoint: string, body: Buffer, requestId: string): Promise<Omit<Outcome, 'index' | 'endpoint' | 'kind' | 'size'>> {
  const target = new URL(`/api/v1/cfssl/${endpoint}`, url);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<Outcome, 'index' | 'endpoint' | 'kind' | 'size'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = httpRequest(
      { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-request-id': requestId } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          finish({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            retryAfter: res.headers['retry-after'] as string | undefined,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', (error) => finish({ error: `response: ${error.message}` }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error('timeout'));
      finish({ error: `no answer within ${REQUEST_TIMEOUT_MS} ms` });
    }, REQUEST_TIMEOUT_MS);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ error: `${error.code ?? ''} ${error.message}` }));
    req.end(body);
  });
}

async function sendJson(url: string, endpoint: string, value: unknown): Promise<Omit<Outcome, 'index' | 'endpoint' | 'kind' | 'size'>> {
  return send(url, endpoint, json(value), `fuzz-setup-${endpoint}`);
}

/** A response body before its shape is checked. */
interface LooseEnvelope {
  success?: unknown;
  result?: unknown;
  errors?: Array<{ code?: unknown; message?: unknown }>;
  messages?: unknown;
}

/** Problems with one answer, or [] when it is a well-formed envelope within the rules. */
function checkOutcome(outcome: Outcome): string[] {
  const problems: string[] = [];
  const overLimit = outcome.size > MAX_BODY;
  // Every request gets a complete answer, a 413 included: no reset, no early close.
  if (outcome.error !== undefined) return [`transport: ${outcome.error}`];
  const status = outcome.status ?? 0;
  if (!outcome.contentType?.startsWith('application/json')) problems.push(`content-type ${JSON.stringify(outcome.contentType)}`);
  let envelope: LooseEnvelope | null = null;
  try {
    envelope = JSON.parse(outcome.text ?? '') as LooseEnvelope | null;
  } catch {
    problems.push('body is not JSON');
  }
  if (envelope === null || typeof envelope !== 'object') return [...problems, 'no envelope'];
  if (typeof envelope.success !== 'boolean' || !Array.isArray(envelope.errors) || !Array.isArray(envelope.messages) || !('result' in envelope)) {
    problems.push('envelope shape');
  }
  if (envelope.success === true) {
    if (status !== 200) problems.push(`success with status ${status}`);
    if (envelope.errors?.length !== 0) problems.push('success with errors');
  } else {
    const code = envelope.errors?.[0]?.code;
    if (typeof code !== 'number' || !Number.isInteger(code)) problems.push(`errors[0].code ${JSON.stringify(code)}`);
    if (typeof envelope.errors?.[0]?.message !== 'string') problems.push('errors[0].message not a string');
    if (envelope.result !== null) problems.push('failure with a result');
    if (status === 503) {
      if (!outcome.retryAfter) problems.push('503 without Retry-After');
    } else if (status < 400 || status > 499) {
      problems.push(`failure with status ${status}`);
    }
  }
  if (outcome.expect !== undefined) {
    const item = envelope.errors?.[0];
    if (status !== outcome.expect.status || item?.code !== outcome.expect.code) {
      problems.push(`expected ${outcome.expect.status}/${outcome.expect.code}, got ${status}/${String(item?.code)}`);
    } else if (outcome.expect.message !== undefined && !outcome.expect.message.test(String(item?.message))) {
      problems.push(`message ${JSON.stringify(item?.message)} does not match ${String(outcome.expect.message)}`);
    }
  }
  if (overLimit && status !== 413) problems.push(`over-limit body answered ${status}`);
  if (!overLimit && status === 413) problems.push('413 for a body under the limit');
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  scratch = await createScratch('fuzz');
  dataDir = scratch.path('data');
  // A default profile without auth key (→ sign) and one with (→ authsign): every POST endpoint is served.
  const config = await scratch.write('fuzz-config.json', {
    signing: {
      default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth', 'client auth'] },
      profiles: {
        authed: { expiry: '24h', usages: ['signing', 'server auth'], auth_key: 'fuzz' },
        client: { expiry: '2h', usages: ['signing', 'client auth'] },
      },
    },
    auth_keys: { fuzz: { type: 'standard', key: AUTH_KEY_HEX } },
  });
  // Trust data, so bundles can succeed and newcert/sign get a bundler for `"bundle": true`.
  trustRoot = await makeRootCa(scratch, 'fuzz-root', 'Fuzz Root');
  trustIntermediate = await makeIntermediateCa(scratch, 'fuzz-inter', trustRoot);
  const child = spawnCertsmith([
    'serve', '--port', '0', '--data-dir', dataDir, '--config', config, '--max-queue', '100000', '--loglevel', 'info',
    '--ca-bundle', trustRoot.certFile, '--int-bundle', trustIntermediate.certFile,
  ]);
  const line = await child.waitForLine((candidate) => /^certsmith listening on http:\/\/\S+$/.test(candidate), 30_000);
  server = Object.assign(child, { url: /^certsmith listening on (http:\/\/\S+)$/.exec(line)![1]! });
});

afterAll(async () => {
  agent.destroy();
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('POST endpoints under fuzzing', () => {
  it(`answer ${TOTAL_BODIES} generated bodies with well-formed envelopes, every type error 400/400, never 5xx, hang, crash or incomplete answer`, async () => {
    // Discover what is served: 404 = not served. `[]` is rejected before any work is done.
    const served: Endpoint[] = [];
    for (const endpoint of POST_ENDPOINTS) {
      const probe = await send(server.url, endpoint, Buffer.from('[]'), `fuzz-probe-${endpoint}`);
      if (probe.status !== 404) served.push(endpoint);
    }
    expect(served, 'bundle and newcert must be served').toEqual(expect.arrayContaining(['bundle', 'newcert']));

    const material = await makeMaterial(server.url, trustRoot, trustIntermediate);
    const perEndpoint = Math.ceil(TOTAL_BODIES / served.length);
    const work: Array<{ endpoint: Endpoint; recipe: Recipe }> = [];
    for (const [i, endpoint] of served.entries()) {
      const recipes = fc.sample(recipesArb(endpoint, material), { seed: SEED + i, numRuns: perEndpoint });
      for (const recipe of recipes) work.push({ endpoint, recipe });
    }
    // Interleave endpoints deterministically so the workers see a mix.
    const order = fc.sample(fc.shuffledSubarray(work.map((_, i) => i), { minLength: work.length, maxLength: work.length }), { seed: SEED, numRuns: 1 })[0]!;

    const started = Date.now();
    const failures: Array<Outcome & { problems: string[]; dump: string }> = [];
    const statusCounts = new Map<string, number>();
    const kindCounts = new Map<string, number>();
    const debugCounts = new Map<string, number>();
    let next = 0;
    let sent = 0;
    let bytes = 0;
    const workers = Array.from({ length: CONCURRENCY }, async () => {
      while (next < order.length) {
        const index = order[next++]!;
        const { endpoint, recipe } = work[index]!;
        const body = recipe.build();
        bytes += body.length;
        const answer = await send(server.url, endpoint, body, `fuzz-${index}`);
        sent++;
        const outcome: Outcome = { index, endpoint, kind: recipe.kind, size: body.length, ...(recipe.expect ? { expect: recipe.expect } : {}), ...answer };
        const key = `${endpoint} ${answer.status ?? 'transport error'}`;
        statusCounts.set(key, (statusCounts.get(key) ?? 0) + 1);
        kindCounts.set(recipe.kind, (kindCounts.get(recipe.kind) ?? 0) + 1);
        if (process.env.FUZZ_DEBUG && recipe.kind === 'plausible') {
          const message = /"message":"([^"]{0,80})/.exec(answer.text ?? '')?.[1] ?? 'ok';
          const key = `${endpoint} ${answer.status} ${message}`;
          debugCounts.set(key, (debugCounts.get(key) ?? 0) + 1);
        }
        const problems = checkOutcome(outcome);
        if (problems.length > 0) {
          // FUZZ_DUMP_DIR keeps the failing bodies (the scratch folder is removed at the end).
          const dump = join(process.env.FUZZ_DUMP_DIR ?? scratch.dir, `failure-${index}.bin`);
          await writeFile(dump, body);
          failures.push({ ...outcome, text: outcome.text?.slice(0, 300), problems, dump });
        }
      }
    });
    await Promise.all(workers);
    const seconds = (Date.now() - started) / 1000;

    // Still alive and healthy.
    const health = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(new URL('/api/v1/cfssl/health', server.url), { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('health timeout')));
      req.on('error', reject);
      req.end();
    });
    const unexpected = server.lines
      .map(parseLogLine)
      .filter((line): line is Record<string, unknown> => line !== null && typeof line.level === 'number' && line.level >= 50);

    if (process.env.FUZZ_DEBUG) console.log([...debugCounts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} ${k}`).join('\n'));
    console.log(
      [
        `fuzz: ${sent} bodies (${(bytes / 1024 / 1024).toFixed(1)} MiB) to ${served.join(', ')} in ${seconds.toFixed(1)} s, seed ${SEED}`,
        `by kind: ${[...kindCounts].map(([k, n]) => `${k} ${n}`).join(', ')}`,
        `by status: ${[...statusCounts].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`,
      ].join('\n'),
    );
    if (failures.length > 0) {
      // One line per kind of problem, with a count and one example (its body is in the dump file).
      const byProblem = new Map<string, { count: number; example: (typeof failures)[number] }>();
      for (const failure of failures) {
        const key = `${failure.endpoint} ${failure.kind}: ${failure.problems.join('; ').replace(/"[^"]*"/g, '"…"')}`;
        const entry = byProblem.get(key);
        if (entry === undefined) byProblem.set(key, { count: 1, example: failure });
        else entry.count++;
      }
      for (const line of unexpected) console.log(`server: ${String(line.msg)} reqId ${String(line.reqId)}: ${JSON.stringify(line.err).slice(0, 400)}`);
      console.log([...byProblem].map(([key, { count, example }]) => `${count} × ${key} (e.g. ${example.dump}: ${example.text?.slice(0, 160)})`).join('\n'));
    }
    expect(work.length).toBeGreaterThanOrEqual(TOTAL_BODIES);
    expect(sent).toBe(work.length);
    expect(failures.slice(0, 20), `${failures.length} bad answers`).toEqual([]);
    expect(unexpected.map((line) => ({ reqId: line.reqId, msg: line.msg, err: line.err })).slice(0, 10)).toEqual([]);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toMatchObject({ success: true, result: { healthy: true } });
    expect(server.child.exitCode).toBeNull();
    expect(server.child.signalCode).toBeNull();
  }, 360_000);
});
