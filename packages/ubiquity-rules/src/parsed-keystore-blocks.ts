/**
 * What the keystore PEM blocks of one metadata file parsed to, by the block's base64 body: the
 * cfssl_trust keystores repeat most blocks verbatim (1,750 blocks, 573 distinct bodies, 441
 * distinct certificates), and each store is read by every server at start-up. The same body text is
 * the same bytes, so a repeat gets the same answer without being checked, decoded or read again
 * (docs/performance.md#keystores-parsed-once-per-metadata-file).
 */

interface ParsedBlock {
  readonly body: string;
  readonly hashes: readonly string[];
}

/** Characters of a body's end that key it: a certificate's body ends in its signature. */
const TAIL = 32;

/** SPKI hashes of keystore blocks already parsed (`[]`: not a certificate), by body text. */
export class ParsedKeystoreBlocks {
  /**
   * By the body's last characters, then compared whole: a Map keyed by whole bodies hashes each
   * ≈1.7 KB body on every lookup, which cost more than decoding it (start-up pass 6c).
   */
  readonly #byTail = new Map<string, ParsedBlock[]>();

  /** The hashes of a block with this body, when one was parsed. */
  get(body: string): readonly string[] | undefined {
    const candidates = this.#byTail.get(body.slice(-TAIL));
    if (candidates === undefined) return undefined;
    for (const candidate of candidates) if (candidate.body === body) return candidate.hashes;
    return undefined;
  }

  /** Remember what the block with this body parsed to. */
  set(body: string, hashes: readonly string[]): void {
    const tail = body.slice(-TAIL);
    const candidates = this.#byTail.get(tail);
    if (candidates === undefined) this.#byTail.set(tail, [{ body, hashes }]);
    else candidates.push({ body, hashes });
  }
}
