/**
 * A success answer sent as it is, outside the JSON envelope: an operation returns one when its
 * result is a document of its own type (a DER CRL as `application/pkix-crl`).
 */
export class RawResponse {
  constructor(
    /** The body bytes. */
    readonly body: Uint8Array,
    /** Its `Content-Type`. */
    readonly contentType: string,
    /** More response headers (caching). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}
