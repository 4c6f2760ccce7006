// @ts-check
/**
 * Mutations of DER and PEM inputs. Three layers, each chosen at random per input:
 *
 * - structure: the DER is read into a tree of TLVs, one node is changed (content replaced by
 *   interesting values, tag changed, node removed, duplicated, moved, spliced in from another seed,
 *   wrapped in deep nesting) and the tree is written back with correct lengths — so the input gets
 *   past the length checks and reaches the decoders of OIDs, strings, times, extensions and keys;
 * - header: one TLV's length field is rewritten without touching anything else (huge, short by one,
 *   indefinite, non-minimal, five octets, 2^32-1) — the "length field" attacks;
 * - bytes: flips, interesting octets, insertions, deletions, truncation, duplication.
 *
 * PEM text is made from a (mutated) DER under a label, then text mutations are applied (base64
 * damage, padding, whitespace, labels, headers, junk, several blocks).
 */
import { readElement } from '@certsmith/x509-core';

/** @typedef {import('./random.mjs').Random} Random */
/** @typedef {{ tag: number, content: Uint8Array | null, children: Node[] | null }} Node */

const INTERESTING_OCTETS = [0x00, 0x01, 0x7f, 0x80, 0x81, 0x82, 0x84, 0x85, 0xff, 0x30, 0x31, 0x06, 0x02, 0x03, 0x04, 0x05, 0x0c, 0x13, 0x16, 0x17, 0x18, 0x1f, 0x3f, 0xa0, 0xa3];
const INTERESTING_TAGS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x1a, 0x1c, 0x1e, 0x30, 0x31, 0x80, 0x81, 0x82, 0x86, 0x87, 0x88, 0xa0, 0xa1, 0xa3, 0xa4, 0x1f, 0x3f, 0xff, 0x21, 0x23, 0x2c];
const INTERESTING_LENGTHS = [0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffff, 0x1000000, 0x7fffffff, 0xffffffff];

/** Interesting content octets per universal tag, the values decoders trip over. */
const INTERESTING_CONTENT = [
  '', '00', '80', 'ff', '0000', '0080', 'ff7f', '7fffffffffffffff', '8000000000000000', '00'.repeat(9) + '01',
  // OIDs: first-arc edge cases, non-minimal arcs, unterminated arcs, huge arcs
  '2a864886f70d010101', '55', '8080', '80', '88', 'ffffffffffffffffff7f', '2a8001', '2a86', '883701', '7f', '28', '4f', '50',
  // strings: invalid UTF-8, surrogates, NULs, odd BMP lengths, 4-byte UniversalString
  'c328', 'eda080', 'f4908080', 'c0af', '610062', 'd800', '00', '0000d800', '00110000', 'e282ac',
  // times
  '3939313233313233353935395a', '3030303130313030303030305a', '3530303232393030303030305a', '3231303232393030303030305a',
  '393931323331323335393539', '393931323331323335392b31343030', '3939313233313233355a', '3939313233313234363030305a',
  '31303030303130313030303030305a', '3230353030313031303030303030302e5a', '32303530303130313030303030302e3132333435365a',
  // BIT STRING padding, BOOLEAN values
  '07', '0800', '0701', '01ff', '02', '01',
].map((hex) => Uint8Array.from(Buffer.from(hex, 'hex')));

/**
 * Read DER into a tree: constructed elements (bit 0x20) whose contents parse completely become
 * nodes with children, everything else keeps its content. `null` when the top does not parse.
 * @param {Uint8Array} bytes @param {number} start @param {number} end @param {number} depth
 * @returns {Node[] | null}
 */
export function readNodes(bytes, start, end, depth) {
  /** @type {Node[]} */
  const nodes = [];
  let offset = start;
  while (offset < end) {
    let element;
    try {
      element = readElement(bytes, offset, end);
    } catch {
      return null;
    }
    const children = (element.tag & 0x20) !== 0 && depth < 40 ? readNodes(bytes, element.valueStart, element.end, depth + 1) : null;
    nodes.push({ tag: element.tag, content: children === null ? bytes.subarray(element.valueStart, element.end) : null, children });
    offset = element.end;
  }
  return nodes;
}

/** @param {number} length */
function lengthOctets(length) {
  if (length < 0x80) return [length];
  const out = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) out.unshift(rest & 0xff);
  return [0x80 | out.length, ...out];
}

/** Octets of a length field. @param {number} length */
function lengthFieldSize(length) {
  if (length < 0x80) return 1;
  let count = 1;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) count++;
  return count;
}

/**
 * Content lengths of every node, bottom-up in one pass (deeply nested trees stay linear).
 * @param {Node} node @param {Map<Node, number>} lengths @returns {number} the node's encoded size
 */
function measure(node, lengths) {
  let length = 0;
  if (node.children === null) length = /** @type {Uint8Array} */ (node.content).length;
  else for (const child of node.children) length += measure(child, lengths);
  lengths.set(node, length);
  return 1 + lengthFieldSize(length) + length;
}

/** @param {Node} node @param {Uint8Array} out @param {number} offset @param {Map<Node, number>} lengths @returns {number} */
function writeNode(node, out, offset, lengths) {
  out[offset++] = node.tag;
  for (const octet of lengthOctets(/** @type {number} */ (lengths.get(node)))) out[offset++] = octet;
  if (node.children === null) {
    out.set(/** @type {Uint8Array} */ (node.content), offset);
    return offset + /** @type {Uint8Array} */ (node.content).length;
  }
  for (const child of node.children) offset = writeNode(child, out, offset, lengths);
  return offset;
}

/** Write a list of nodes with minimal DER lengths. @param {Node[]} nodes */
export function writeNodes(nodes) {
  /** @type {Map<Node, number>} */
  const lengths = new Map();
  let total = 0;
  for (const node of nodes) total += measure(node, lengths);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const node of nodes) offset = writeNode(node, out, offset, lengths);
  return out;
}

/** Every node of a tree with its parent list. @param {Node[]} roots */
function allNodes(roots) {
  /** @type {{ node: Node, siblings: Node[], index: number }[]} */
  const out = [];
  const walk = (/** @type {Node[]} */ list) => {
    for (let i = 0; i < list.length; i++) {
      const node = /** @type {Node} */ (list[i]);
      out.push({ node, siblings: list, index: i });
      if (node.children !== null) walk(node.children);
    }
  };
  walk(roots);
  return out;
}

/** @param {Node} node @returns {Node} */
function cloneNode(node) {
  return { tag: node.tag, content: node.content, children: node.children === null ? null : node.children.map(cloneNode) };
}

/**
 * One structure-aware change, lengths kept consistent. `donor` is another seed's DER to splice from.
 * @param {Random} random @param {Uint8Array} der @param {Uint8Array} donor @returns {Uint8Array}
 */
export function mutateStructure(random, der, donor) {
  const roots = readNodes(der, 0, der.length, 0);
  if (roots === null || roots.length === 0) return mutateBytes(random, der);
  const nodes = allNodes(roots);
  const target = random.pick(nodes);
  const { node, siblings, index } = target;
  switch (random.below(10)) {
    case 0:
    case 1: {
      // Content replaced: interesting values, random bytes, or the same bytes with one change.
      const roll = random.below(3);
      const content = roll === 0 ? random.pick(INTERESTING_CONTENT) : roll === 1 ? random.bytes(random.below(24)) : mutateBytes(random, node.content ?? writeNodes(node.children ?? []));
      siblings[index] = { tag: node.tag & ~0x20 & 0xff, content, children: null };
      if (random.chance(0.5)) /** @type {Node} */ (siblings[index]).tag = node.tag;
      break;
    }
    case 2:
      node.tag = random.chance(0.7) ? random.pick(INTERESTING_TAGS) : random.below(256);
      break;
    case 3:
      siblings.splice(index, 1);
      break;
    case 4:
      siblings.splice(index, 0, cloneNode(node));
      break;
    case 5: {
      // Move a node elsewhere in the tree (fields in the wrong place, extensions in names…).
      siblings.splice(index, 1);
      const destination = random.pick(allNodes(roots).filter((entry) => entry.node.children !== null));
      if (destination?.node.children) destination.node.children.splice(random.below(destination.node.children.length + 1), 0, node);
      break;
    }
    case 6: {
      // Splice a subtree of another seed in place of this node.
      const donorRoots = readNodes(donor, 0, donor.length, 0);
      if (donorRoots !== null && donorRoots.length > 0) siblings[index] = cloneNode(random.pick(allNodes(donorRoots)).node);
      break;
    }
    case 7: {
      // Deep nesting: wrap the node in many constructed layers.
      let wrapped = node;
      const depth = random.chance(0.5) ? 20 + random.below(30) : 200 + random.below(2000);
      for (let i = 0; i < depth; i++) wrapped = { tag: random.chance(0.8) ? 0x30 : 0xa0, content: null, children: [wrapped] };
      siblings[index] = wrapped;
      break;
    }
    case 8: {
      // Many children: a SEQUENCE OF blown up (bounded).
      if (node.children !== null && node.children.length > 0) {
        const child = random.pick(node.children);
        const copies = 1 + random.below(200);
        for (let i = 0; i < copies; i++) node.children.push(cloneNode(child));
      } else {
        siblings[index] = { tag: node.tag, content: random.pick(INTERESTING_CONTENT), children: null };
      }
      break;
    }
    default: {
      // Constructed becomes primitive with the same bytes, or primitive content re-read as children.
      if (node.children !== null) siblings[index] = { tag: node.tag, content: writeNodes(node.children), children: null };
      else siblings[index] = { tag: node.tag | 0x20, content: null, children: [{ tag: random.pick(INTERESTING_TAGS), content: node.content ?? new Uint8Array(), children: null }] };
      break;
    }
  }
  return writeNodes(roots);
}

/**
 * Rewrite the length field of one TLV, leaving the rest alone (what a hostile length does).
 * @param {Random} random @param {Uint8Array} der @returns {Uint8Array}
 */
export function mutateHeader(random, der) {
  /** @type {{ start: number, valueStart: number }[]} */
  const headers = [];
  const walk = (/** @type {number} */ start, /** @type {number} */ end, /** @type {number} */ depth) => {
    let offset = start;
    while (offset < end && headers.length < 4096) {
      let element;
      try {
        element = readElement(der, offset, end);
      } catch {
        return;
      }
      headers.push(element);
      if ((element.tag & 0x20) !== 0 && depth < 40) walk(element.valueStart, element.end, depth + 1);
      offset = element.end;
    }
  };
  walk(0, der.length, 0);
  if (headers.length === 0) return mutateBytes(random, der);
  const { start, valueStart } = random.pick(headers);
  const content = valueStart - start - 1;
  const actual = (() => {
    try {
      const element = readElement(der, start);
      return element.end - element.valueStart;
    } catch {
      return 0;
    }
  })();
  /** @type {number[]} */
  let field;
  switch (random.below(6)) {
    case 0:
      field = lengthOctets(random.pick(INTERESTING_LENGTHS));
      break;
    case 1:
      field = lengthOctets(Math.max(0, actual + random.pick([-2, -1, 1, 2, 128, 256])));
      break;
    case 2:
      field = [0x80]; // indefinite
      break;
    case 3:
      field = [0x81, actual & 0xff]; // non-minimal when short
      break;
    case 4:
      field = [0x80 | (5 + random.below(3)), ...random.bytes(5 + random.below(3))]; // more than four octets
      break;
    default:
      field = [0x84, 0xff, 0xff, 0xff, 0xff].slice(0, 1 + random.below(5));
      break;
  }
  void content;
  const out = new Uint8Array(der.length - (valueStart - start - 1) + field.length);
  out.set(der.subarray(0, start + 1), 0);
  out.set(field, start + 1);
  out.set(der.subarray(valueStart), start + 1 + field.length);
  return out;
}

/**
 * Byte-level changes (1 to 4 of them).
 * @param {Random} random @param {Uint8Array} input @returns {Uint8Array}
 */
export function mutateBytes(random, input) {
  let bytes = input;
  const rounds = 1 + random.below(4);
  for (let round = 0; round < rounds; round++) {
    const at = random.below(bytes.length + 1);
    switch (random.below(7)) {
      case 0: {
        if (bytes.length === 0) break;
        const copy = new Uint8Array(bytes);
        copy[Math.min(at, copy.length - 1)] ^= 1 << random.below(8);
        bytes = copy;
        break;
      }
      case 1: {
        if (bytes.length === 0) break;
        const copy = new Uint8Array(bytes);
        copy[Math.min(at, copy.length - 1)] = random.pick(INTERESTING_OCTETS);
        bytes = copy;
        break;
      }
      case 2: {
        const insert = random.chance(0.5) ? random.bytes(1 + random.below(8)) : Uint8Array.of(random.pick(INTERESTING_OCTETS));
        bytes = concat(bytes.subarray(0, at), insert, bytes.subarray(at));
        break;
      }
      case 3:
        bytes = concat(bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + 1 + random.below(16))));
        break;
      case 4:
        bytes = bytes.subarray(0, at);
        break;
      case 5: {
        const end = Math.min(bytes.length, at + 1 + random.below(64));
        bytes = concat(bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end));
        break;
      }
      default:
        bytes = concat(bytes, random.bytes(random.below(16)));
        break;
    }
  }
  return bytes;
}

/** @param {...Uint8Array} parts */
function concat(...parts) {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * A mutated DER: structure, header or byte changes (1–3 rounds), sometimes none (5%: the
 * unchanged seed keeps the agreement checks honest on valid input).
 * @param {Random} random @param {Uint8Array} der @param {Uint8Array} donor
 */
export function mutateDer(random, der, donor) {
  if (random.chance(0.05)) return der;
  let out = der;
  const rounds = 1 + random.below(3);
  for (let round = 0; round < rounds; round++) {
    const layer = random.weighted([6, 2, 2]);
    out = layer === 0 ? mutateStructure(random, out, donor) : layer === 1 ? mutateHeader(random, out) : mutateBytes(random, out);
  }
  return out;
}

const LABELS = ['CERTIFICATE', 'CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST', 'PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'EC PARAMETERS', 'ENCRYPTED PRIVATE KEY', 'PKCS7', 'X', ''];

/**
 * PEM text around DER, then text-level damage.
 * @param {Random} random @param {Uint8Array} der @param {string} label
 */
export function toMutatedPem(random, der, label) {
  const chosen = random.chance(0.85) ? label : random.pick(LABELS);
  const base64 = Buffer.from(der).toString('base64');
  const width = random.chance(0.8) ? 64 : 1 + random.below(120);
  let body = '';
  for (let i = 0; i < base64.length; i += width) body += `${base64.slice(i, i + width)}\n`;
  const headers = random.chance(0.1) ? random.pick(['Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n', 'Key: value\n\n', 'NoColon\n']) : '';
  let text = `-----BEGIN ${chosen}-----\n${headers}${body}-----END ${chosen}-----\n`;
  if (random.chance(0.1)) text = `${random.pick(['junk before\n', '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n', ' \r\n'])}${text}`;
  if (random.chance(0.1)) text += random.pick(['trailing junk', text, '\n\n', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n']);
  if (random.chance(0.4)) text = mutateText(random, text);
  return text;
}

const TEXT_PIECES = ['-----', 'BEGIN ', 'END ', '\n', '\r\n', ' ', '\t', '=', '==', '===', 'A', '/', '+', '-', ':', '\u0000', 'é', '\ud800', '-----END CERTIFICATE-----', '-----BEGIN CERTIFICATE-----\n'];

/** Character-level changes to PEM text. @param {Random} random @param {string} input */
export function mutateText(random, input) {
  let text = input;
  const rounds = 1 + random.below(3);
  for (let round = 0; round < rounds; round++) {
    const at = random.below(text.length + 1);
    switch (random.below(4)) {
      case 0:
        text = text.slice(0, at) + random.pick(TEXT_PIECES) + text.slice(at);
        break;
      case 1:
        text = text.slice(0, at) + text.slice(at + 1 + random.below(8));
        break;
      case 2:
        text = text.slice(0, at);
        break;
      default:
        text = text.slice(0, at) + String.fromCharCode(random.below(0x80)) + text.slice(at + 1);
        break;
    }
  }
  return text;
}
