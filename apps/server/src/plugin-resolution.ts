/**
 * Finding a signer plugin module from the `plugin` of a `signers` entry:
 *
 * - a path (`./x.mjs`, `../x.js`, `/abs/x.js`, `file:` URL) resolves against the config file's folder;
 * - a package name resolves first from the config file's folder (a plugin installed next to the
 *   config with `npm install`), then from certsmith's own installation (first-party plugins such as
 *   `@certsmith/signer-pkcs11`), like Node resolves an `import` written in a file in that folder.
 *
 * Resolution uses `module.createRequire(<dir>/noop.js).resolve`, which honours `exports` with the
 * `require`/`node`/`default` conditions; for ESM-only packages whose `exports` offer only an
 * `import` condition, the package's `exports` map is read with the `import` conditions instead.
 */
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where a plugin module was found. */
export interface ResolvedPlugin {
  /** The `plugin` value as configured. */
  specifier: string;
  /** Absolute file path of the module to import. */
  path: string;
  /** `file:` URL of {@link ResolvedPlugin.path}. */
  url: string;
  /** How it was found. */
  from: 'path' | 'config-dir' | 'certsmith';
}

/** Why a plugin could not be found. */
export class PluginNotFoundError extends Error {
  /** Folders searched (for package names) or the path tried. */
  readonly searched: readonly string[];
  readonly isPath: boolean;

  constructor(message: string, searched: readonly string[], isPath: boolean) {
    super(message);
    this.name = 'PluginNotFoundError';
    this.searched = searched;
    this.isPath = isPath;
  }
}

/** certsmith's own folder (`apps/server/dist` or `src`): package names fall back to resolving from here. */
export const CERTSMITH_DIR = dirname(fileURLToPath(import.meta.url));

/** True when `specifier` is a path (relative, absolute or a `file:` URL) rather than a package name. */
export function isPathSpecifier(specifier: string): boolean {
  return (
    specifier.startsWith('./') ||
    specifier.startsWith('../') ||
    specifier === '.' ||
    specifier === '..' ||
    specifier.startsWith('.\\') ||
    specifier.startsWith('..\\') ||
    specifier.startsWith('file:') ||
    isAbsolute(specifier)
  );
}

/**
 * Resolve `specifier` for a config in `configDir`.
 * @throws PluginNotFoundError when no module is found
 */
export async function resolvePluginModule(specifier: string, configDir: string, certsmithDir: string = CERTSMITH_DIR): Promise<ResolvedPlugin> {
  if (isPathSpecifier(specifier)) {
    const path = specifier.startsWith('file:') ? fileURLToPath(specifier) : resolve(configDir, specifier);
    let isFile = false;
    try {
      isFile = (await stat(path)).isFile();
    } catch {
      throw new PluginNotFoundError(`plugin file ${path} does not exist`, [path], true);
    }
    if (!isFile) throw new PluginNotFoundError(`plugin path ${path} is not a file (name the module file itself, e.g. index.js)`, [path], true);
    return { specifier, path, url: pathToFileURL(path).href, from: 'path' };
  }
  const searched: string[] = [];
  for (const [dir, from] of [
    [configDir, 'config-dir'],
    [certsmithDir, 'certsmith'],
  ] as const) {
    searched.push(dir);
    const path = await resolvePackageFrom(specifier, dir);
    if (path !== null) return { specifier, path, url: pathToFileURL(path).href, from };
  }
  throw new PluginNotFoundError(`package ${specifier} is not installed`, searched, false);
}

/** Resolve a package specifier as code in `dir` would; `null` when it is not installed there. */
export async function resolvePackageFrom(specifier: string, dir: string): Promise<string | null> {
  try {
    return createRequire(join(dir, 'noop.js')).resolve(specifier);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return resolveImportExports(specifier, dir);
    if (code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}

/** Split `@scope/name/sub/path` or `name/sub/path` into the package name and the `exports` subpath. */
export function splitPackageSpecifier(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split('/');
  const size = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, size).join('/');
  const rest = parts.slice(size).join('/');
  return { name, subpath: rest === '' ? '.' : `./${rest}` };
}

const IMPORT_CONDITIONS = ['import', 'node', 'default'];

/** Pick the target of one `exports` value with the ESM conditions (nested condition objects allowed). */
function pickExportTarget(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = pickExportTarget(item);
      if (target !== null) return target;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [condition, target] of Object.entries(value)) {
      if (!IMPORT_CONDITIONS.includes(condition)) continue;
      const picked = pickExportTarget(target);
      if (picked !== null) return picked;
    }
  }
  return null;
}

/**
 * The `import`-condition target of an ESM-only package (one whose `exports` has no `require` or
 * `default` target), found by walking up from `dir` through `node_modules` folders as Node does.
 */
async function resolveImportExports(specifier: string, dir: string): Promise<string | null> {
  const { name, subpath } = splitPackageSpecifier(specifier);
  let current = resolve(dir);
  for (;;) {
    const packageDir = join(current, 'node_modules', name);
    let manifest: { exports?: unknown } | null = null;
    try {
      manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { exports?: unknown };
    } catch {
      manifest = null;
    }
    if (manifest !== null) {
      const exportsField = manifest.exports;
      const entry =
        typeof exportsField === 'string' || Array.isArray(exportsField) || (isConditionsObject(exportsField) && subpath === '.')
          ? exportsField
          : (exportsField as Record<string, unknown> | undefined)?.[subpath];
      const target = pickExportTarget(entry);
      return target === null ? null : resolve(packageDir, target);
    }
    const parent = dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

function isConditionsObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).every((key) => !key.startsWith('.'));
}
