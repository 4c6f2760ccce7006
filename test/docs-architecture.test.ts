/**
 * `docs/architecture.md` stays true to the code:
 * - its package table lists every workspace package, and each row's "stands on" column is exactly
 *   the package's `@certsmith/*` dependencies in its `package.json`;
 * - every `path:name` it quotes names a file that exists and declares `name`; every other quoted
 *   path exists;
 * - every `@certsmith/*` import of a source file is declared by its package (test support files: a
 *   dev dependency too), so the table is the import graph, and the package graph has no circle;
 * - no two source files import each other, directly or through others (tests are left out);
 * - no CLI command (`apps/server/src/commands/`) loads `@certsmith/http-api`, directly or through
 *   the app's own modules (type-only imports are erased and do not count);
 * - every `docs/<page>.md#anchor` a source comment links to (benchmark stories live in
 *   docs/performance.md, not in comments) names a heading of that page.
 *
 * A rename, a move or a new dependency fails here until the page says so.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGE = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const SCOPE = '@certsmith/';

interface Workspace {
  /** `packages/issuer`, `plugins/signer-local`, `apps/server`. */
  dir: string;
  /** The name the page uses: the folder under `packages/`, else the whole path. */
  pageName: string;
  name: string;
  dependencies: string[];
  devDependencies: string[];
}

function certsmithNames(record: Record<string, string> | undefined): string[] {
  return Object.keys(record ?? {})
    .filter((name) => name.startsWith(SCOPE))
    .sort();
}

function workspaces(): Workspace[] {
  const dirs = ['packages', 'plugins', 'apps'].flatMap((parent) =>
    readdirSync(join(ROOT, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, parent, entry.name, 'package.json')))
      .map((entry) => `${parent}/${entry.name}`),
  );
  return dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    return {
      dir,
      pageName: dir.startsWith('packages/') ? dir.slice('packages/'.length) : dir,
      name: manifest.name,
      dependencies: certsmithNames(manifest.dependencies),
      devDependencies: certsmithNames(manifest.devDependencies),
    };
  });
}

const WORKSPACES = workspaces();

/** The page's package table: first column → the set named in the "stands on" column. */
function pageTable(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of PAGE.split('\n')) {
    const cells = /^\|\s*`([^`]+)`\s*\|[^|]*\|([^|]*)\|\s*$/.exec(line);
    if (cells === null) continue;
    const standsOn = cells[2]!.trim();
    rows.set(
      cells[1]!,
      standsOn === '—' ? [] : standsOn.split(',').map((name) => name.trim()).sort(),
    );
  }
  return rows;
}

/** A page name (`bundler`, `signer-local`, `apps/server`) for a package name. */
function pageNameOf(packageName: string): string {
  const workspace = WORKSPACES.find((candidate) => candidate.name === packageName);
  if (workspace === undefined) return packageName;
  return workspace.dir.startsWith('packages/') ? workspace.pageName : workspace.dir.replace(/^plugins\//, '');
}

/** A path as the page quotes it: under `packages/` unless it starts with `apps/` or `plugins/`. */
function resolvePagePath(path: string): string {
  return /^(apps|plugins)\//.test(path) ? join(ROOT, path) : join(ROOT, 'packages', path);
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|mts)$/.test(entry.name) && !/\.(test|d)\.m?ts$/.test(entry.name)) files.push(path);
    }
  };
  if (existsSync(join(ROOT, dir, 'src'))) walk(join(ROOT, dir, 'src'));
  return files;
}

/** Module specifiers a file imports or re-exports (static, type-only and `import('…')` with a literal). */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((imported) => imported.fileName);
}

describe('docs/architecture.md', () => {
  it("lists every workspace package with exactly the @certsmith packages its package.json depends on", () => {
    const table = pageTable();
    for (const workspace of WORKSPACES) {
      expect(table.has(workspace.pageName), `${workspace.pageName} has no row in docs/architecture.md`).toBe(true);
      expect(table.get(workspace.pageName), `"stands on" of ${workspace.pageName}`).toEqual(workspace.dependencies.map(pageNameOf).sort());
    }
    expect([...table.keys()].sort()).toEqual(WORKSPACES.map((workspace) => workspace.pageName).sort());
  });

  it('names files that exist and, after a colon, names they declare', () => {
    const quoted = [...PAGE.matchAll(/`([A-Za-z0-9_./-]+\/[A-Za-z0-9_.-]+\.(?:ts|mjs|md))(?::([A-Za-z_$][\w$]*))?`/g)];
    expect(quoted.length).toBeGreaterThan(20);
    for (const [, path, name] of quoted) {
      const file = existsSync(join(ROOT, path!)) ? join(ROOT, path!) : resolvePagePath(path!);
      expect(existsSync(file), `docs/architecture.md names ${path}, which does not exist`).toBe(true);
      if (name === undefined) continue;
      const declared = new RegExp(
        `(?:function\\*?|class|interface|type|const|let|enum)\\s+${name}\\b|^\\s*(?:async\\s+)?${name}\\s*[<(]|^\\s*${name}\\s*:\\s*`,
        'm',
      );
      expect(declared.test(readFileSync(file, 'utf8')), `docs/architecture.md names ${name} in ${path}, which does not declare it`).toBe(true);
    }
  });

  it('names folders that exist', () => {
    for (const [, path] of PAGE.matchAll(/`([A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)*\/)`/g)) {
      expect(existsSync(join(ROOT, path!)) || existsSync(resolvePagePath(path!)), `docs/architecture.md names ${path}, which does not exist`).toBe(true);
    }
  });
});

describe('links from source comments', () => {
  it('name headings that exist', () => {
    const broken: string[] = [];
    let links = 0;
    for (const workspace of WORKSPACES) {
      const files = [...sourceFiles(workspace.dir), ...(existsSync(join(ROOT, workspace.dir, 'native')) ? readdirSync(join(ROOT, workspace.dir, 'native')).map((name) => join(ROOT, workspace.dir, 'native', name)) : [])];
      for (const file of files) {
        for (const [, page, anchor] of readFileSync(file, 'utf8').matchAll(/docs\/([\w/.-]+\.md)#([\w-]+)/g)) {
          links += 1;
          const target = join(ROOT, 'docs', page!);
          if (!existsSync(target) || !headingAnchors(readFileSync(target, 'utf8')).has(anchor!)) broken.push(`${relative(ROOT, file)}: docs/${page}#${anchor}`);
        }
      }
    }
    expect(links).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens. */
function headingAnchors(page: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, text] of page.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    anchors.add(text!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'));
  }
  return anchors;
}

describe('the import graph', () => {
  it('imports only the @certsmith packages each package declares (support files for tests: dev dependencies too)', () => {
    const undeclared: string[] = [];
    for (const workspace of WORKSPACES) {
      for (const file of sourceFiles(workspace.dir)) {
        const allowed = new Set([workspace.name, ...workspace.dependencies, ...(file.includes('/test-support/') ? workspace.devDependencies : [])]);
        for (const specifier of importsOf(file)) {
          if (!specifier.startsWith(SCOPE)) continue;
          const packageName = specifier.split('/').slice(0, 2).join('/');
          if (!allowed.has(packageName)) undeclared.push(`${relative(ROOT, file)} imports ${specifier}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });

  it('lets plugins stand on the contract alone: @certsmith/signer-api and @certsmith/x509-core', () => {
    const plugins = WORKSPACES.filter((workspace) => workspace.dir.startsWith('plugins/'));
    expect(plugins.length).toBeGreaterThan(0);
    for (const plugin of plugins) {
      expect(plugin.dependencies.filter((name) => name !== '@certsmith/signer-api' && name !== '@certsmith/x509-core'), plugin.name).toEqual([]);
    }
  });

  it('has no circle between packages', () => {
    const dependencies = new Map(WORKSPACES.map((workspace) => [workspace.name, workspace.dependencies]));
    expect(findCircles(dependencies)).toEqual([]);
  });

  it('has no circle between source files', () => {
    const edges = new Map<string, string[]>();
    for (const workspace of WORKSPACES) {
      for (const file of sourceFiles(workspace.dir)) {
        const targets = importsOf(file)
          .filter((specifier) => specifier.startsWith('.'))
          .map((specifier) => resolve(dirname(file), specifier).replace(/\.m?js$/, (extension) => (extension === '.mjs' ? '.mts' : '.ts')))
          .filter((target) => existsSync(target));
        edges.set(relative(ROOT, file), targets.map((target) => relative(ROOT, target)));
      }
    }
    expect(findCircles(edges)).toEqual([]);
  });
});

describe('the CLI commands', () => {
  it('do not load @certsmith/http-api', () => {
    const commands = join(ROOT, 'apps/server/src/commands');
    const loading: string[] = [];
    for (const command of readdirSync(commands).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))) {
      const seen = new Set<string>();
      const pending: { file: string; trail: string[] }[] = [{ file: join(commands, command), trail: [command] }];
      while (pending.length > 0) {
        const { file, trail } = pending.pop()!;
        if (seen.has(file)) continue;
        seen.add(file);
        for (const specifier of runtimeImportsOf(file)) {
          if (specifier === '@certsmith/http-api' || specifier.startsWith('@certsmith/http-api/')) loading.push(trail.join(' → '));
          if (!specifier.startsWith('.')) continue;
          const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
          if (existsSync(target)) pending.push({ file: target, trail: [...trail, relative(join(ROOT, 'apps/server/src'), target)] });
        }
      }
    }
    expect(loading).toEqual([]);
  });
});

/** Module specifiers a file loads when it runs: imports and re-exports that are not type-only. */
function runtimeImportsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      if (!typeOnly) specifiers.push(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier) && !statement.isTypeOnly) {
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers;
}

/** Strongly connected groups of more than one node (Tarjan), each sorted. */
function findCircles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) circles.push(group.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return circles;
}
