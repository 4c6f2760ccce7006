import { createServer, type Server } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { parseCertificate, toCertinfoResult } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCertificateBytes, describeCertificatePem, describeServerCertificate } from './certinfo.js';
import { certinfoTask } from './certinfo-task.js';

const pki = new TestPki();
const root = pki.root('Certinfo Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Certinfo Inter', root, { key: 'ecdsa-p256' });
const leaf = pki.leaf('localhost', inter, { key: 'ecdsa-p256', dns: ['localhost'], ips: ['127.0.0.1'] });

describe('describeCertificatePem', () => {
  it('describes the one certificate of the PEM text', () => {
    expect(describeCertificatePem(leaf.pem)).toEqual(toCertinfoResult(parseCertificate(leaf.der)));
  });

  it('fails with 1002 for text without a certificate', () => {
    expect(() => describeCertificatePem('this is not a certificate')).toThrow(expect.objectContaining({ code: 1002 }));
  });

  it('fails with 1003 and CFSSL\'s message for more than one certificate', () => {
    expect(() => describeCertificatePem(chainPem(leaf, root))).toThrow(
      expect.objectContaining({ code: 1003, message: 'the PEM file should contain only one object' }),
    );
  });
});

describe('describeCertificateBytes', () => {
  it('reads PEM and DER files alike', () => {
    expect(describeCertificateBytes(Buffer.from(leaf.pem))).toEqual(describeCertificatePem(leaf.pem));
    expect(describeCertificateBytes(leaf.der)).toEqual(describeCertificatePem(leaf.pem));
  });
});

describe('certinfoTask.run', () => {
  it('describes the certificate of its input', () => {
    expect(certinfoTask.run({ certificate: leaf.pem })).toEqual(describeCertificatePem(leaf.pem));
  });
});

describe('describeServerCertificate', () => {
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    server = createServer({ key: leaf.key.pkcs8Pem, cert: chainPem(leaf, inter) }, (socket) => socket.end());
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('describes the leaf the server presents, trusted or not', async () => {
    expect(await describeServerCertificate(`127.0.0.1:${port}`)).toEqual(describeCertificatePem(leaf.pem));
  });

  it('asks the guard before connecting and fails with 6000 when it refuses', async () => {
    await expect(describeServerCertificate(`127.0.0.1:${port}`, { guard: () => false })).rejects.toMatchObject({ code: 6000 });
  });
});
