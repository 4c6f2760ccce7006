/**
 * Time values as RFC 5280 and RFC 6960 want them: whole seconds, `Z`. CRLs use UTCTime through 2049
 * and GeneralizedTime from 2050 (RFC 5280 5.1.2.4–5.1.2.6); OCSP always uses GeneralizedTime
 * (RFC 6960 4.2.1). Times are written straight into a buffer: a CRL writes one per entry.
 */

/** Encoded size of {@link writeCrlTime} for `date`. */
export function crlTimeSize(date: Date): number {
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? 15 : 17;
}

function writeTwo(out: Uint8Array, offset: number, value: number): void {
  out[offset] = 0x30 + Math.floor(value / 10);
  out[offset + 1] = 0x30 + (value % 10);
}

function writeFields(out: Uint8Array, offset: number, date: Date): void {
  writeTwo(out, offset, date.getUTCMonth() + 1);
  writeTwo(out, offset + 2, date.getUTCDate());
  writeTwo(out, offset + 4, date.getUTCHours());
  writeTwo(out, offset + 6, date.getUTCMinutes());
  writeTwo(out, offset + 8, date.getUTCSeconds());
  out[offset + 10] = 0x5a; // Z
}

/** Write a CRL Time (UTCTime 1950–2049, else GeneralizedTime) at `offset`; returns the end offset. */
export function writeCrlTime(out: Uint8Array, offset: number, date: Date): number {
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) {
    out[offset] = 0x17;
    out[offset + 1] = 13;
    writeTwo(out, offset + 2, year % 100);
    writeFields(out, offset + 4, date);
    return offset + 15;
  }
  return writeGeneralizedTime(out, offset, date);
}

/** Write a GeneralizedTime `YYYYMMDDHHMMSSZ` at `offset`; returns the end offset. */
export function writeGeneralizedTime(out: Uint8Array, offset: number, date: Date): number {
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new RangeError(`year ${year} cannot be encoded as GeneralizedTime`);
  out[offset] = 0x18;
  out[offset + 1] = 15;
  writeTwo(out, offset + 2, Math.floor(year / 100));
  writeTwo(out, offset + 4, year % 100);
  writeFields(out, offset + 6, date);
  return offset + 17;
}

/** A CRL Time element. */
export function crlTime(date: Date): Uint8Array {
  const out = new Uint8Array(crlTimeSize(date));
  writeCrlTime(out, 0, date);
  return out;
}

/** A GeneralizedTime element. */
export function generalizedTime(date: Date): Uint8Array {
  const out = new Uint8Array(17);
  writeGeneralizedTime(out, 0, date);
  return out;
}

/** `date` with the milliseconds dropped (DER times carry whole seconds). */
export function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}
