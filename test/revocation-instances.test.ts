/**
 * Two `certsmith serve` instances on one real PostgreSQL (issue 21, "across instances"): a revocation
 * made through one shows in the other's OCSP answers and CRL within 5 s — even when the other had the
 * good answer and the old CRL cached — and the CRL numbers the two sign only grow.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch, post, startServer } from './fixtures-issue.js';
import type { Scratch, Server } from './fixtures-issue.js';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import { startPostgresCluster } from './helpers/postgres.js';
import type { PostgresCluster } from './helpers/postgres.js';
import { within } from './helpers/within.js';

const pki = new TestPki();
const ca = pki.root({ O: 'certsmith e2e', CN: 'instances CA' }, { key: 'ecdsa-p256', keyLabel: 'inst-ca' });
const leaf = pki.leaf('shared.instances.test', ca, { key: 'ecdsa-p256', keyLabel: 'inst-leaf', notAfter: new Date(Math.floor(pki.days(30).getTime() / 1000) * 1000) });
const aki = toHex(ca.subjectKeyId!).toLowerCase();
const serial = serialToDecimal(leaf.serialHex.toLowerCase());

let scratch: Scratch;
let cluster: PostgresCluster;
let a: Server;
let b: Server;

function openssl(args: readonly string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile('openssl', [...args], { cwd: scratch.dir, encoding: 'utf8', timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
}

const ocsp = (server: Server): Promise<string> => openssl(['ocsp', '-issuer', 'ca.pem', '-cert', 'leaf.pem', '-url', `${server.url}/ocsp`, '-CAfile', 'ca.pem', '-no_nonce']);

/** The CRL `server` serves now: its number and whether it lists the leaf (checked by openssl with the CA). */
async function crlOf(server: Server, name: string): Promise<{ number: bigint; listsLeaf: boolean }> {
  await writeFile(scratch.path(name), Buffer.from(await (await fetch(`${server.url}/api/v1/certsmith/crl/default`)).arrayBuffer()));
  const text = await openssl(['crl', '-inform', 'DER', '-in', name, '-CAfile', 'ca.pem', '-noout', '-text']);
  expect(text).toContain('verify OK');
  return { number: BigInt(/CRL Number: \n\s*(\d+)/.exec(text)![1]!), listsLeaf: text.includes(leaf.serialHex.toUpperCase().replace(/^0+(?=..)/, '')) };
}

beforeAll(async () => {
  scratch = await createScratch('revocation-instances');
  await scratch.write('ca.pem', ca.pem);
  await scratch.write('ca-key.pem', ca.key.traditionalPem);
  await scratch.write('leaf.pem', leaf.pem);
  cluster = await startPostgresCluster();
  const dbConfig = await scratch.write('db.json', { driver: 'postgres', data_source: await cluster.createDatabase('revocation') });
  const common = ['--ca', scratch.path('ca.pem'), '--ca-key', scratch.path('ca-key.pem'), '--db-config', dbConfig, '--ocsp-path', '/ocsp'];
  a = await startServer([...common, '--data-dir', scratch.path('data-a')]);
  b = await startServer([...common, '--data-dir', scratch.path('data-b')]);
}, 180_000);

afterAll(async () => {
  await killAllCertsmith();
  cluster?.stop();
  await scratch?.cleanup();
});

describe('two instances on one PostgreSQL', () => {
  it('shows a revocation made through one in the other\'s OCSP answers and CRL within 5 s', async () => {
    const added = await post(a.url, 'certadd', { serial_number: serial, authority_key_identifier: aki, status: 'good', expiry: leaf.notAfter.toISOString().replace('.000Z', 'Z'), pem: leaf.pem });
    expect(added.envelope.errors).toEqual([]);
    // B answers (and caches) good and signs (and caches) a CRL without the leaf.
    expect(await ocsp(b)).toContain('leaf.pem: good');
    const before = await crlOf(b, 'b-before.crl');
    expect(before.listsLeaf).toBe(false);

    expect((await post(a.url, 'revoke', { serial, authority_key_id: aki, reason: 'keyCompromise' })).envelope).toMatchObject({ success: true });
    expect(await ocsp(a)).toContain('leaf.pem: revoked');

    const ocspDelay = await within(5_000, async () => (await ocsp(b)).includes('leaf.pem: revoked'));
    const crlDelay = await within(5_000, async () => (await crlOf(b, 'b-after.crl')).listsLeaf);
    expect(ocspDelay).toBeLessThanOrEqual(5_000);
    expect(crlDelay).toBeLessThanOrEqual(5_000);
    expect(await ocsp(b)).toContain('Reason: keyCompromise');

    // CRL numbers come from the database: whichever instance signs, they only grow.
    const after = await crlOf(b, 'b-final.crl');
    const fromA = await crlOf(a, 'a-final.crl');
    expect(after.number).toBeGreaterThan(before.number);
    expect(fromA.number).not.toBe(after.number);
  });
});
