/**
 * Certificate serial numbers in the three forms revocation meets: CFSSL's store text (decimal, as
 * Go's `big.Int.String()`, lifecycle spec §2.1), a bigint, and DER INTEGER content octets (two's
 * complement, minimal) as CRL entries and OCSP CertIDs carry them.
 */
import { RevocationRequestError } from './errors.js';

/** A serial as a bigint or as decimal text (CFSSL's `serial_number` column). */
export type SerialNumber = bigint | string;

const DECIMAL = /^-?\d+$/;

/**
 * Parse decimal serial text (`"564142266705163047067434699488539944656098241192"`).
 * @throws RevocationRequestError (400) naming `what` when the text is not a decimal integer.
 */
export function parseDecimalSerial(text: string, what = 'serial number'): bigint {
  if (!DECIMAL.test(text)) throw new RevocationRequestError(`${what} must be a decimal integer, got ${JSON.stringify(text)}`);
  return BigInt(text);
}

/** A {@link SerialNumber} as a bigint (decimal text is parsed as by {@link parseDecimalSerial}). */
export function serialToBigInt(serial: SerialNumber): bigint {
  return typeof serial === 'bigint' ? serial : parseDecimalSerial(serial);
}

/** Minimal two's-complement DER INTEGER content octets of `value`. */
export function integerContent(value: bigint): Uint8Array {
  if (value >= 0n) {
    let hex = value.toString(16);
    if (hex.length % 2) hex = `0${hex}`;
    // A set top bit would read as negative: prefix a zero octet (X.690 8.3).
    else if (hex.charCodeAt(0) >= 0x38 /* '8' */) hex = `00${hex}`;
    return Buffer.from(hex, 'hex');
  }
  let length = 1;
  while (-value > 1n << BigInt(8 * length - 1)) length++;
  let twos = (1n << BigInt(8 * length)) + value;
  const out = new Uint8Array(length);
  for (let i = length - 1; i >= 0; i--, twos >>= 8n) out[i] = Number(twos & 0xffn);
  return out;
}

/** The value of two's-complement INTEGER content octets. */
export function integerValue(content: Uint8Array): bigint {
  if (content.length === 0) return 0n;
  let value = BigInt(`0x${Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('hex')}`);
  if ((content[0] as number) & 0x80) value -= 1n << BigInt(8 * content.length);
  return value;
}

/** Decimal text of INTEGER content octets: the key CFSSL's store uses for a serial. */
export function decimalSerial(content: Uint8Array): string {
  return integerValue(content).toString(10);
}
