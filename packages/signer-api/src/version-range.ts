/**
 * A small semver range check, enough for plugin `apiVersion` ranges (`^1.0.0`, `~1.2`, `>=1.0.0 <2`,
 * `1.x || 2.x`, `*`). Plugins declare the host API range they support and the host refuses them at
 * load time when its version is outside it (the fastify-plugin pattern from the style guide).
 * Pre-release tags are compared as in semver 2.0.0 but, unlike npm, a pre-release version is not
 * excluded from ranges that do not mention one: the contract only ever ships release versions.
 */

interface Version {
  major: number;
  minor: number;
  patch: number;
  prerelease: string[];
}

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;
const PARTIAL = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Parse a full `MAJOR.MINOR.PATCH[-pre][+build]` version, `null` when malformed. */
function parseVersion(text: string): Version | null {
  const match = VERSION.exec(text.trim());
  if (!match) return null;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] ? match[4].split('.') : [],
  };
}

function compareIdentifiers(a: string, b: string): number {
  const aNumeric = /^\d+$/.test(a);
  const bNumeric = /^\d+$/.test(b);
  if (aNumeric && bNumeric) return Number(a) - Number(b);
  if (aNumeric) return -1;
  if (bNumeric) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareVersions(a: Version, b: Version): number {
  if (a.major !== b.major) return a.major - b.major;
  if (a.minor !== b.minor) return a.minor - b.minor;
  if (a.patch !== b.patch) return a.patch - b.patch;
  // A version with a pre-release has lower precedence than the release (semver 11.3).
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const left = a.prerelease[i];
    const right = b.prerelease[i];
    if (left === undefined) return -1;
    if (right === undefined) return 1;
    const diff = compareIdentifiers(left, right);
    if (diff !== 0) return diff;
  }
  return 0;
}

type Comparator = (version: Version) => boolean;

function version(major: number, minor: number, patch: number, prerelease: string[] = []): Version {
  return { major, minor, patch, prerelease };
}

const atLeast = (low: Version): Comparator => (v) => compareVersions(v, low) >= 0;
const below = (high: Version): Comparator => (v) => compareVersions(v, high) < 0;

/** Expand one range token (`^1.2.3`, `>=1`, `1.x`…) into comparators; throws on malformed input. */
function parseComparator(token: string): Comparator[] {
  const operatorMatch = /^(\^|~|>=|<=|>|<|=)?(.*)$/.exec(token) as RegExpExecArray;
  const operator = operatorMatch[1] ?? '';
  const rest = operatorMatch[2] as string;
  const partial = PARTIAL.exec(rest);
  if (!partial) throw new RangeError(`invalid version range token "${token}"`);
  const wildcard = (part: string | undefined): boolean => part === undefined || /^[xX*]$/.test(part);
  const major = wildcard(partial[1]) ? null : Number(partial[1]);
  const minor = major === null || wildcard(partial[2]) ? null : Number(partial[2]);
  const patch = minor === null || wildcard(partial[3]) ? null : Number(partial[3]);
  const prerelease = patch !== null && partial[4] ? partial[4].split('.') : [];

  if (major === null) return operator === '<' || operator === '>' ? [() => false] : [() => true];
  const low = version(major, minor ?? 0, patch ?? 0, prerelease);

  switch (operator) {
    case '^': {
      // Allow changes that do not modify the left-most non-zero part (npm semantics).
      let high: Version;
      if (major > 0 || minor === null) high = version(major + 1, 0, 0);
      else if (minor > 0 || patch === null) high = version(0, minor + 1, 0);
      else high = version(0, 0, patch + 1);
      return [atLeast(low), below(high)];
    }
    case '~': {
      const high = minor === null ? version(major + 1, 0, 0) : version(major, minor + 1, 0);
      return [atLeast(low), below(high)];
    }
    case '>=':
      return [atLeast(low)];
    case '<':
      return [below(low)];
    case '>': {
      if (patch !== null) return [(v) => compareVersions(v, low) > 0];
      const next = minor === null ? version(major + 1, 0, 0) : version(major, minor + 1, 0);
      return [atLeast(next)];
    }
    case '<=': {
      if (patch !== null) return [(v) => compareVersions(v, low) <= 0];
      const next = minor === null ? version(major + 1, 0, 0) : version(major, minor + 1, 0);
      return [below(next)];
    }
    default: {
      if (patch !== null) return [(v) => compareVersions(v, low) === 0];
      const next = minor === null ? version(major + 1, 0, 0) : version(major, minor + 1, 0);
      return [atLeast(low), below(next)];
    }
  }
}

/**
 * True when `version` (e.g. `1.0.0`) satisfies `range` (npm range syntax subset: `^`, `~`,
 * comparators, `x`/`*` wildcards, partial versions, space for AND, `||` for OR). Throws a
 * RangeError when either is malformed, so a typo in a plugin is reported rather than ignored.
 */
export function satisfiesVersionRange(versionText: string, range: string): boolean {
  const parsed = parseVersion(versionText);
  if (!parsed) throw new RangeError(`invalid version "${versionText}"`);
  const alternatives = range.split('||');
  for (const alternative of alternatives) {
    // `>= 1.2` is written with a space by some authors: glue operators to their version.
    const tokens = alternative.trim().replace(/(\^|~|>=|<=|>|<|=)\s+/g, '$1').split(/\s+/).filter(Boolean);
    const comparators = tokens.length === 0 ? [() => true] : tokens.flatMap(parseComparator);
    if (comparators.every((test) => test(parsed))) return true;
  }
  return false;
}
