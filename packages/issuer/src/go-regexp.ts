/**
 * Go RE2 regular expressions (CFSSL `name_whitelist`, behaviour doc 3.6/3.7) compiled as JavaScript
 * RegExps. The common syntax is shared; the differences met in real configs are translated:
 * leading flag groups `(?i)`/`(?s)`/`(?m)`, named groups `(?P<name>…)`, `\A` and `\z`, and POSIX
 * classes such as `[[:alnum:]]`. Matching is an unanchored search, like Go's `Regexp.Find`.
 */

const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-/:-@[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** Compile a Go regexp; throws a SyntaxError when JavaScript cannot compile the translation. */
export function compileGoRegexp(pattern: string): RegExp {
  let source = pattern;
  let flags = '';
  const leading = /^\(\?([imsU]+)\)/.exec(source);
  if (leading) {
    const goFlags = leading[1] as string;
    if (goFlags.includes('U')) throw new SyntaxError('ungreedy flag (?U) is not supported');
    flags = [...new Set(goFlags)].join('');
    source = source.slice(leading[0].length);
  }
  source = source
    .replace(/\(\?P</g, '(?<')
    .replace(/\[:(\^?)([a-z]+):\]/g, (whole, negate: string, name: string) => {
      const range = POSIX_CLASSES[name];
      if (range === undefined) return whole;
      return negate ? `^${range}` : range;
    })
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])');
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    // Go accepts escapes of any punctuation, which the `u` flag refuses; retry without it.
    return new RegExp(source, flags);
  }
}
