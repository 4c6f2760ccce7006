/**
 * Go regular expressions (CFSSL's `name_whitelist`, `-mutual-tls-cn`; behaviour doc 3.6/3.7) run on
 * `re2js`, a JavaScript port of RE2 — the engine family of Go's `regexp` package: the same syntax
 * (`(?i)`, `(?P<name>…)`, `\A`, `\z`, `[[:alpha:]]`, `\pL`, `\Q…\E`) and the same refusals
 * (lookaround, backreferences, possessive quantifiers, repeat counts above 1000, `\C`), with
 * matching in time linear in the input, so an operator-supplied pattern can never backtrack
 * catastrophically on a request-supplied name.
 *
 * A compiled expression is plain data (`{ source }`): signing policies cross into worker threads
 * by structured clone, which keeps data but drops class instances and functions. Each thread
 * compiles a pattern once, on first use, into its own cache.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';

/**
 * `re2js`, loaded on the first pattern: it is one 260 KB module whose import took ≈11 ms of each
 * thread's start-up (the event loop and every worker import this module), and most servers have no
 * Go pattern in their configuration (docs/performance.md, start-up pass 3). Loaded with `require`
 * because compiling a pattern is synchronous; `re2js` ships the same version as CommonJS.
 */
let engine: typeof import('re2js') | undefined;

function re2js(): typeof import('re2js') {
  engine ??= createRequire(import.meta.url)('re2js') as typeof import('re2js');
  return engine;
}

/** A Go regular expression that compiled. Match with {@link matchGoRegexp}. */
export interface GoRegexp {
  /** The pattern as written. */
  readonly source: string;
}

/** The pattern does not compile in Go; `message` is Go's (`error parsing regexp: …`). */
export class GoRegexpSyntaxError extends Error {
  override name = 'GoRegexpSyntaxError';
}

/** Compiled programs of this thread, by pattern (patterns come from configuration: a handful). */
const compiled = new Map<string, RE2JS>();

function program(source: string): RE2JS {
  let re = compiled.get(source);
  if (re === undefined) {
    const { RE2JS: Engine, RE2JSException } = re2js();
    try {
      re = Engine.compile(source);
    } catch (cause) {
      if (cause instanceof RE2JSException) throw new GoRegexpSyntaxError(cause.message, { cause });
      throw cause;
    }
    compiled.set(source, re);
  }
  return re;
}

/**
 * Compile a Go regexp. Throws {@link GoRegexpSyntaxError} with Go's message for what Go refuses,
 * e.g. `error parsing regexp: invalid or unsupported Perl syntax: \`(?=\``.
 */
export function compileGoRegexp(pattern: string): GoRegexp {
  program(pattern);
  return { source: pattern };
}

/**
 * True when `regexp` matches somewhere in `text` — an unanchored search, like Go's
 * `Regexp.MatchString` and the `Regexp.Find(...) != nil` CFSSL uses; anchor with `^…$`.
 */
export function matchGoRegexp(regexp: GoRegexp, text: string): boolean {
  return program(regexp.source).test(text);
}
