/**
 * CFSSL's response envelope (`api/api.go:Response`). Every response certsmith sends, errors included,
 * has this shape, with keys in CFSSL's order.
 */

/** One item of `errors` or `messages`: `{code, message}` with `code` first, as CFSSL's `ResponseMessage`. */
export interface ResponseMessage {
  code: number;
  message: string;
}

/** A successful response: `errors` is always `[]`, never `null`. */
export interface SuccessEnvelope<TResult = unknown> {
  success: true;
  result: TResult;
  errors: [];
  messages: ResponseMessage[];
}

/** A failed response: `result` is `null` and `errors` holds exactly one item, as in CFSSL. */
export interface ErrorEnvelope {
  success: false;
  result: null;
  errors: [ResponseMessage];
  messages: [];
}

/** Either kind of envelope. */
export type Envelope<TResult = unknown> = SuccessEnvelope<TResult> | ErrorEnvelope;

/** Build the success envelope for `result`, optionally with `messages` (CFSSL's `SendResponseWithMessage`). */
export function successEnvelope<TResult>(
  result: TResult,
  messages: readonly ResponseMessage[] = [],
): SuccessEnvelope<TResult> {
  return {
    success: true,
    result,
    errors: [],
    messages: messages.map(({ code, message }) => ({ code, message })),
  };
}

/** Build the error envelope for one `{code, message}`. */
export function errorEnvelope(code: number, message: string): ErrorEnvelope {
  return { success: false, result: null, errors: [{ code, message }], messages: [] };
}

/**
 * A result that is already JSON text (made by `JSON.stringify` where the result was computed, e.g. in
 * a worker). An operation may return one: {@link serializeEnvelope} splices the text in as the
 * `result` instead of serialising an object, so a large result is neither structured-cloned across
 * threads as an object graph nor serialised on the event loop.
 */
export class JsonText {
  /** @param text valid JSON (not checked: it comes from `JSON.stringify`) */
  constructor(readonly text: string) {}

  /** So that `JSON.stringify` of an envelope holding one gives the same bytes as {@link serializeEnvelope}. */
  toJSON(): unknown {
    return JSON.parse(this.text) as unknown;
  }
}

/**
 * Serialise an envelope the way CFSSL's Go JSON encoder does: compact, followed by a newline
 * (`json.Encoder.Encode` appends `\n`, so e.g. the health body is 69 bytes long in both servers).
 */
export function serializeEnvelope(envelope: Envelope): string {
  if (envelope.success && envelope.result instanceof JsonText) {
    // Same bytes as JSON.stringify of the envelope: keys in CFSSL's order, compact.
    return `{"success":true,"result":${envelope.result.text},"errors":[],"messages":${JSON.stringify(envelope.messages)}}\n`;
  }
  return `${JSON.stringify(envelope)}\n`;
}
