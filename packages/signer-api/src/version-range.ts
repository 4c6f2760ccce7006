/**
 * Plugin `apiVersion` ranges are npm semver ranges, checked with npm's own `semver` package so a
 * plugin author sees exactly what `npm install` would do with the same range — pre-releases
 * included: `1.1.0-rc.1` does not satisfy `^1.0.0` (a range admits a pre-release only when one of
 * its comparators names a pre-release of the same `major.minor.patch`, e.g. `>=1.1.0-rc.0`).
 */
// The three functions, not the package's index: `semver` is ≈50 files, and this module is loaded by
// every start of `serve`, in every thread (docs/performance.md, start-up).
import satisfies from 'semver/functions/satisfies.js';
import valid from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';

/**
 * True when `version` (e.g. `1.0.0`) satisfies the npm range `range` (`^1.0.0`, `~1.2`,
 * `>=1.0.0 <2`, `1.x || 2.x`, `*`…), with npm's rules. Throws a RangeError when either is
 * malformed, so a typo in a plugin is reported rather than ignored.
 */
export function satisfiesVersionRange(version: string, range: string): boolean {
  if (valid(version) === null) throw new RangeError(`invalid version "${version}"`);
  if (validRange(range) === null) throw new RangeError(`invalid version range "${range}"`);
  return satisfies(version, range);
}
