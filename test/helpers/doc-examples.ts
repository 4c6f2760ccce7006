/**
 * The doc-example marker parser shared by the tests that run documentation pages
 * (`test/docs-examples.test.ts` for api.md, `test/docs-operations-examples.test.ts` for the
 * migration and deployment pages). A page marks a fenced block with an HTML comment right above it:
 *
 *     <!-- example: run, expect 5200; output -->
 *     ```sh
 *     …
 *     ```
 *
 * Directives are separated by `;`, words within one by spaces or commas; what they mean is up to each
 * test (see its header).
 */
import { spawn } from 'node:child_process';

/** A marked fenced block. */
export interface Block {
  /** 1-based line of the marker, for messages. */
  line: number;
  directives: string[][];
  language: string;
  body: string;
}

/** The documented server address examples use; tests replace it with the started server's. */
export const DOC_ADDRESS = /(127\.0\.0\.1|localhost):8888/g;

/** Marked fenced blocks of the page, in order. */
export function markedBlocks(page: string): Block[] {
  const blocks: Block[] = [];
  const pattern = /<!-- example: (.+?) -->\n```(\w*)[^\n]*\n([\s\S]*?)\n```/g;
  for (const match of page.matchAll(pattern)) {
    blocks.push({
      line: page.slice(0, match.index).split('\n').length,
      directives: match[1]!.split(';').map((directive) => directive.trim().split(/[\s,]+/).filter(Boolean)),
      language: match[2]!,
      body: match[3]!,
    });
  }
  return blocks;
}

/** 1-based lines of the fenced blocks that have no `<!-- example: … -->` marker right above them. */
export function unmarkedFences(page: string): number[] {
  const lines = page.split('\n');
  const unmarked: number[] = [];
  let open = false;
  lines.forEach((line, index) => {
    if (!line.startsWith('```')) return;
    if (!open && !/^<!-- example: .+ -->$/.test(lines[index - 1] ?? '')) unmarked.push(index + 1);
    open = !open;
  });
  return unmarked;
}

/** The first word of the block's first directive (`run`, `config`, …). */
export const kind = (block: Block): string => block.directives[0]![0]!;

/** The directive of the block named `name` (its words, name first), if it has one. */
export const has = (block: Block, name: string): string[] | undefined => block.directives.find((directive) => directive[0] === name);

/** Every JSON value in `text` (concatenated or on separate lines, pretty-printed or not). */
export function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"' && depth > 0) inString = true;
    else if (char === '{' || char === '[') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}

/** What a shell block did. */
export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a shell block with bash (`-e -o pipefail`); bounded: killed and rejected after `timeoutMs`. */
export function runShell(script: string, cwd: string, timeoutMs = 60_000, env: NodeJS.ProcessEnv = process.env): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`example did not finish within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
