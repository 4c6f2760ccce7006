/**
 * Compile-time ties between zod result schemas (which feed the OpenAPI document) and the TypeScript
 * result types the handlers return, so a field added to one and not the other fails the build
 * instead of leaving the published document wrong.
 */

/** `true` when `A` and `B` are assignable to each other, else `false`. */
export type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Use as `schemaMatches<SameShape<z.output<typeof schema>, ResultType>>(true)`: the call only
 * type-checks when the two shapes agree.
 */
export function schemaMatches<T extends true>(proof: T): T {
  return proof;
}
