/**
 * Every example of `docs/api.md` runs against the built server. The page marks its fenced blocks
 * with an HTML comment right above them:
 *
 * | marker | block | what this test does |
 * |---|---|---|
 * | `<!-- example: setup -->` | sh | runs it (bash, `-e -o pipefail`) in a fresh folder before the server starts |
 * | `<!-- example: config FILE -->` | json | writes it to FILE in that folder |
 * | `<!-- example: serve -->` | sh | starts `certsmith serve` with the block's arguments (plus port 0, a data dir, one worker) |
 * | `<!-- example: run -->` | sh | runs it with `127.0.0.1:8888` replaced by the server's address; exit 0, and every JSON value printed must say `"success": true` |
 * | `<!-- example: run, expect C1 C2… -->` | sh | the same, but the printed values must be error envelopes with these codes, in order |
 * | `<!-- example: run, text -->` | sh | exit 0 and some output |
 * | `<!-- example: response OP STATUS -->` | json | must validate against the served OpenAPI document's response schema of OP for STATUS |
 * | `<!-- example: output -->` | json | must equal (as JSON values) what the previous `run` block printed |
 * | `<!-- example: log -->` | json | a request log line: the server must have written one for the same operation, status and code, with the same fields |
 *
 * Directives combine with `;` (`response newcert 400; output`). Blocks run in page order in one
 * folder, so later examples use files earlier ones wrote. The test also checks that every endpoint of
 * the OpenAPI document has a run example and a response example, that every metric the page lists
 * is exported, and that every `errors.md#code` link has its anchor.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { killAllCertsmith, parseLogLine, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';
import { DOC_ADDRESS, has, jsonValues, kind, markedBlocks, runShell } from './helpers/doc-examples.js';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const PAGE = await readFile(join(DOCS, 'api.md'), 'utf8');
const ERRORS_PAGE = await readFile(join(DOCS, 'errors.md'), 'utf8');
const blocks = markedBlocks(PAGE);

let scratch: Scratch;
let server: StartedCertsmith;
let document: { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>> };
let ajv: InstanceType<typeof Ajv2020>;
let lastOutput: unknown[] | null = null;

beforeAll(async () => {
  for (const tool of ['curl', 'jq', 'openssl']) {
    const found = await runShell(`command -v ${tool}`, process.cwd());
    if (found.code !== 0) throw new Error(`docs/api.md examples need ${tool} on PATH (apt-get install ${tool})`);
  }
  scratch = await createScratch('docs');
  for (const block of blocks.filter((candidate) => kind(candidate) === 'setup')) {
    const result = await runShell(block.body, scratch.dir);
    expect(result.code, `setup block at docs/api.md:${block.line} failed:\n${result.stderr}`).toBe(0);
  }
  for (const block of blocks.filter((candidate) => kind(candidate) === 'config')) {
    await writeFile(join(scratch.dir, block.directives[0]![1]!), block.body);
  }
  const serve = blocks.find((candidate) => kind(candidate) === 'serve');
  if (serve === undefined) throw new Error('docs/api.md has no `<!-- example: serve -->` block');
  const words = serve.body.replace(/\\\n/g, ' ').trim().split(/\s+/);
  expect(words.slice(0, 2)).toEqual(['certsmith', 'serve']);
  // Relative paths in the documented command resolve against the example folder.
  const args = words.slice(2).map((word, index, all) => (index > 0 && all[index - 1]!.startsWith('--') && !word.startsWith('-') && !word.startsWith('/') ? join(scratch.dir, word) : word));
  server = await startCertsmith([...args, '--port', '0', '--workers', '1', '--loglevel', 'info', '--data-dir', join(scratch.dir, 'data')], 60_000);
  document = (await (await fetch(`${server.url}/api/v1/cfssl/openapi.json`)).json()) as typeof document;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** The path and item of the operation with this `operationId` (`/api/v1/cfssl/<op>`, or its own path). */
function documentedOperation(operation: string): [string, Record<string, { operationId?: string; responses: Record<string, { $ref?: string }> }>] | undefined {
  return Object.entries(document.paths).find(([, item]) => Object.values(item).some((spec) => (spec as { operationId?: string }).operationId === operation)) as never;
}

function expectDocumentedResponse(operation: string, status: string, value: unknown, where: string): void {
  const found = documentedOperation(operation);
  expect(found, `${where}: ${operation} is not served`).toBeDefined();
  const [path, item] = found!;
  const [method, spec] = Object.entries(item)[0]!;
  const response = spec.responses[status];
  expect(response, `${where}: ${operation} documents no ${status}`).toBeDefined();
  const pointer = response!.$ref ?? `#/paths/${path.replace(/\//g, '~1')}/${method}/responses/${status}`;
  const validate = ajv.getSchema(`openapi.json${pointer}/content/application~1json/schema`)!;
  expect(validate(value), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
}

describe('docs/api.md examples', () => {
  it('has runnable examples', () => {
    expect(blocks.filter((block) => kind(block) === 'run').length).toBeGreaterThan(10);
  });

  for (const block of blocks) {
    const where = `docs/api.md:${block.line}`;
    const first = kind(block);
    if (first === 'run') {
      const mode = block.directives[0]!.slice(1);
      it(`${where} runs (${block.directives[0]!.join(' ')})`, async () => {
        const script = block.body.replace(DOC_ADDRESS, new URL(server.url).host);
        const result = await runShell(script, scratch.dir);
        expect(result.code, `${where} exited ${result.code}:\n${result.stderr}\n${result.stdout}`).toBe(0);
        if (mode[0] === 'text') {
          expect(result.stdout.trim(), `${where} printed nothing`).not.toBe('');
          lastOutput = null;
          return;
        }
        const values = jsonValues(result.stdout);
        lastOutput = values;
        expect(values.length, `${where} printed no JSON:\n${result.stdout}`).toBeGreaterThan(0);
        if (mode[0] === 'expect') {
          const codes = values.map((value) => {
            const envelope = value as { success?: boolean; errors?: { code: number }[] };
            return envelope.success === false ? String(envelope.errors?.[0]?.code) : 'ok';
          });
          expect(codes, `${where}:\n${result.stdout}`).toEqual(mode.slice(1));
        } else {
          for (const value of values) {
            expect(value, `${where}:\n${result.stdout}`).toMatchObject({ success: true });
            const errors = (value as { errors?: unknown[] }).errors;
            if (errors !== undefined) expect(errors).toEqual([]);
          }
        }
      });
    }
    if (block.language === 'json' && (has(block, 'response') || has(block, 'output'))) {
      it(`${where} is a real response (${block.directives.map((directive) => directive.join(' ')).join('; ')})`, () => {
        const values = jsonValues(block.body);
        expect(values.length).toBeGreaterThan(0);
        const response = has(block, 'response');
        if (response !== undefined) {
          for (const value of values) expectDocumentedResponse(response[1]!, response[2]!, value, where);
        }
        if (has(block, 'output')) {
          expect(lastOutput, `${where}: no run block before it`).not.toBeNull();
          expect(values, `${where}: differs from what the example printed`).toEqual(lastOutput);
        }
      });
    }
    if (first === 'log') {
      it(`${where} is a real request log line`, async () => {
        const documented = JSON.parse(block.body) as Record<string, unknown>;
        let actual: Record<string, unknown> | undefined;
        const deadline = Date.now() + 10_000;
        while (actual === undefined && Date.now() < deadline) {
          actual = server.lines
            .map(parseLogLine)
            .find((line): line is Record<string, unknown> => line?.['msg'] === 'request' && ['operation', 'status', 'code', 'label', 'profile'].every((key) => line[key] === documented[key]));
          if (actual === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(actual, `${where}: no log line like it (run the matching request earlier in the page)`).toBeDefined();
        // `pid` (the process that answered) is added with serve --processes above 1 (deploy.md).
        expect(Object.keys(actual!).filter((key) => key !== 'pid').sort()).toEqual(Object.keys(documented).sort());
        expect(actual).toMatchObject({ level: documented['level'], msg: documented['msg'], method: documented['method'], path: documented['path'] });
      });
    }
  }

  it('has a run example and a response example for every endpoint the server describes', () => {
    const runs = blocks.filter((block) => kind(block) === 'run').map((block) => block.body).join('\n');
    const responses = new Set(blocks.flatMap((block) => (has(block, 'response') ? [has(block, 'response')![1]] : [])));
    for (const [path, item] of Object.entries(document.paths)) {
      // A path template's `{param}` stands for whatever the example puts there.
      const pattern = new RegExp(path.split(/\{[a-z_]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/?\\n]+'));
      expect(pattern.test(runs), `no run example for ${path}`).toBe(true);
      const operation = (Object.values(item)[0] as { operationId?: string }).operationId;
      const envelope = path.startsWith('/api/v1/cfssl/') || path.startsWith('/api/v1/certsmith/');
      if (envelope && operation !== undefined && !['openapi', 'metrics'].includes(operation)) expect(responses.has(operation), `no response example for ${operation}`).toBe(true);
    }
  });

  it('lists only metrics the server exports, and all of its own', async () => {
    const exported = new Set([...(await (await fetch(`${server.url}/metrics`)).text()).matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
    const listed = new Set([...PAGE.matchAll(/`(certsmith_[a-z0-9_]+)`/g)].map((match) => match[1]!));
    expect([...listed].filter((name) => !exported.has(name))).toEqual([]);
    expect([...exported].filter((name) => name.startsWith('certsmith_') && !listed.has(name))).toEqual([]);
  });

  it('links only error codes that errors.md has', () => {
    const anchors = new Set([...ERRORS_PAGE.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!));
    const links = [...PAGE.matchAll(/errors\.md#([\w-]+)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThan(20);
    expect(links.filter((anchor) => !anchors.has(anchor))).toEqual([]);
  });
});
