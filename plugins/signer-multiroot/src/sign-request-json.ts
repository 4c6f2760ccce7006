/**
 * The JSON bytes of a sign request as the remote decodes them (cfssl `signer.SignRequest`,
 * behaviour doc 4.1). These exact bytes are what the authsign HMAC covers (doc 4.4), so they are
 * produced once and sent as they are.
 */
import type { SignRequest } from '@certsmith/signer-api';
import { BadRequestError } from '@certsmith/x509-core';

const DECIMAL = /^-?\d+$/;

/**
 * Serialise `request`. `serial` is a Go `big.Int` on the wire, i.e. a JSON *number* of any size,
 * which `JSON.stringify` cannot write from a bigint (and a number would lose digits above 2^53),
 * so it is spliced in as digits. A serial that is not a decimal integer → 400.
 */
export function encodeSignRequest(request: SignRequest): string {
  const { serial, ...rest } = request;
  const json = JSON.stringify(rest);
  if (serial === undefined || serial === null) return json;
  const digits = typeof serial === 'bigint' ? serial.toString(10) : String(serial).trim();
  if (!DECIMAL.test(digits)) throw new BadRequestError(`serial must be a decimal integer, got ${JSON.stringify(String(serial))}`);
  return json === '{}' ? `{"serial":${digits}}` : `${json.slice(0, -1)},"serial":${digits}}`;
}
