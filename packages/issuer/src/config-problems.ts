/**
 * What configuration loaders find, as data: every problem is `{ path, message, code }` with the JSON
 * path of the offending key as written in the file (`signing.profiles.www.expiry`,
 * `signers["a.b"].options`, `auth_keys.main.key`). Loaders report into a {@link ConfigReport} and
 * never decide how the findings are shown: `certsmith serve` stops at the first problem, `certsmith
 * config check` prints them all — one rulebook, two presentations.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** A key the configuration cannot be used with (start-up stops, `config check` exits 2). */
export interface ConfigProblem {
  /** JSON path of the key (`""` = the document itself). */
  readonly path: string;
  /** What is wrong and, where it helps, what to do. Never a secret value. */
  readonly message: string;
  /** CFSSL code of the failure (5200 for policy problems, the signer's code for a signer). */
  readonly code: number;
}

/** A key that is accepted but does nothing the author may expect (logged at start-up). */
export interface ConfigWarning {
  readonly path: string;
  readonly message: string;
}

/** One segment of a JSON path: an object key or an array index. */
export type JsonPathSegment = string | number;

/** `base.key`, `base["odd key"]` for keys that are not plain words, `base[3]` for indexes. */
export function joinPath(base: string, segment: JsonPathSegment): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (/^[A-Za-z_][\w-]*$/.test(segment)) return base === '' ? segment : `${base}.${segment}`;
  return `${base}[${JSON.stringify(segment)}]`;
}

/** The path of `segments` below `base`. */
export function formatPath(segments: readonly JsonPathSegment[], base = ''): string {
  return segments.reduce<string>((path, segment) => joinPath(path, segment), base);
}

/**
 * Collects problems and warnings. {@link ConfigReport.at} gives a view that prefixes every path,
 * so a policy parsed from `signers.hsm.signing` reports `signers.hsm.signing.default.expiry`.
 */
export class ConfigReport {
  readonly problems: ConfigProblem[];
  readonly warnings: ConfigWarning[];
  readonly #base: string;

  constructor(base = '', problems: ConfigProblem[] = [], warnings: ConfigWarning[] = []) {
    this.#base = base;
    this.problems = problems;
    this.warnings = warnings;
  }

  /** The path `segments` below this view's base. */
  path(...segments: JsonPathSegment[]): string {
    return formatPath(segments, this.#base);
  }

  /** Record a problem at `segments` (relative to this view). */
  problem(segments: readonly JsonPathSegment[], message: string, code: number = ErrorCode.PolicyInvalid): void {
    this.problems.push({ path: formatPath(segments, this.#base), message, code });
  }

  /** Record a problem found elsewhere whose path is already formatted (relative to this view). */
  add(problem: ConfigProblem): void {
    const path = problem.path === '' ? this.#base : this.#base === '' ? problem.path : `${this.#base}.${problem.path}`;
    this.problems.push({ ...problem, path });
  }

  /** Record a warning at `segments` (relative to this view). */
  warning(segments: readonly JsonPathSegment[], message: string): void {
    this.warnings.push({ path: formatPath(segments, this.#base), message });
  }

  /** A view that writes into the same lists with paths below `segments`. */
  at(...segments: JsonPathSegment[]): ConfigReport {
    return new ConfigReport(formatPath(segments, this.#base), this.problems, this.warnings);
  }

  /** True when a problem was recorded at `segments` (relative to this view), e.g. a type error there. */
  hasProblemAt(...segments: JsonPathSegment[]): boolean {
    const path = formatPath(segments, this.#base);
    return this.problems.some((problem) => problem.path === path);
  }

  /** Problems recorded so far (through any view). */
  get problemCount(): number {
    return this.problems.length;
  }
}

/**
 * A configuration was refused. `message` and `code` are the first problem's (CFSSL's reason, e.g.
 * `empty expiry string`), `path` its JSON path; `problems` holds every problem found. Thrown by the
 * loaders' fail-fast entry points; a caller that knows the file prefixes the path (see
 * {@link describeProblem}).
 */
export class ConfigProblemsError extends CertsmithError {
  readonly problems: readonly ConfigProblem[];
  /** JSON path of the first problem. */
  readonly path: string;

  constructor(problems: readonly ConfigProblem[], options?: { cause?: unknown }) {
    const first = problems[0] ?? { path: '', message: 'invalid configuration', code: ErrorCode.PolicyInvalid };
    super(first.code, first.message, options);
    this.problems = problems;
    this.path = first.path;
  }
}

/** `path: message`, or the message alone for the document itself. */
export function describeProblem(problem: Pick<ConfigProblem, 'path' | 'message'>): string {
  return problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
}
