import { createPrivateKey, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import type * as X509 from '@peculiar/x509';
import { x509 } from '../../src/peppol/pki/x509-lib';
import { WebhookSender } from '../../src/webhooks/http-sender';
import { OAuth2TokenCache, type OAuth2Credentials } from '../../src/webhooks/oauth2-tokens';
import { parseAllowList } from '../../src/webhooks/ssrf-guard';

/*
 * Delivery authentication beyond the HMAC signature (spec 5 item 12) and the egress (spec 8), against real servers on
 * 127.0.0.1: a receiver that wants a bearer token from its own token endpoint, one that wants a client certificate,
 * a fixed source address and an egress proxy.
 */

const LOOPBACK = parseAllowList(['127.0.0.0/8']);
const NONE = parseAllowList([]);
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const crypto = webcrypto as unknown as Crypto;

/** A names-to-127.0.0.1 resolver, so TLS names can be checked on loopback. */
const resolve = (_h: string, _o: unknown, cb: (e: null, a: Array<{ address: string; family: number }>) => void) =>
  cb(null, [{ address: '127.0.0.1', family: 4 }]);

interface Seen {
  authorization: string | undefined;
  remoteAddress: string | undefined;
  clientCn: string | undefined;
  body: string;
}

function listen(server: Server): Promise<number> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

function recordingHandler(seen: Seen[], status: (req: IncomingMessage) => number) {
  return (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as Partial<TLSSocket>).getPeerCertificate?.();
      seen.push({
        authorization: req.headers.authorization,
        remoteAddress: req.socket.remoteAddress,
        clientCn: peer && 'subject' in peer ? String(peer.subject?.CN ?? '') || undefined : undefined,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(status(req)).end();
    });
  };
}

async function pem(keys: CryptoKeyPair): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({
    format: 'pem',
    type: 'pkcs8',
  }) as string;
}

/** A CA, a server certificate for receiver.test and a client certificate, all PEM. */
async function tlsMaterial() {
  const notBefore = new Date(Date.now() - 86_400_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const caKeys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: 'CN=Hook Test CA',
      notBefore,
      notAfter,
      keys: caKeys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      ],
    },
    crypto,
  );
  const leaf = async (serial: string, cn: string, extensions: X509.Extension[]) => {
    const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.create(
      {
        serialNumber: serial,
        subject: `CN=${cn}`,
        issuer: ca.subject,
        notBefore,
        notAfter,
        signingAlgorithm: ALG,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        extensions,
      },
      crypto,
    );
    return { cert: cert.toString('pem'), key: await pem(keys) };
  };
  const server = await leaf('02', 'receiver.test', [
    new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'receiver.test' }]),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
  ]);
  const client = await leaf('03', 'gateway-client', [
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
  ]);
  return { ca: ca.toString('pem'), server, client };
}

describe('delivery authentication and egress', () => {
  const servers: Server[] = [];
  const senders: WebhookSender[] = [];
  const sender = (extra: Partial<ConstructorParameters<typeof WebhookSender>[0]> = {}) => {
    const s = new WebhookSender({ allowList: LOOPBACK, allowHttp: true, userAgent: 'test', ...extra });
    senders.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of senders) await s.close();
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  describe('OAuth2 client credentials of the receiver', () => {
    const valid = new Set<string>();
    const tokenRequests: Array<{ authorization: string | undefined; form: URLSearchParams }> = [];
    let tokenAnswer: () => { status: number; body: Record<string, unknown> };
    let issued = 0;
    const seen: Seen[] = [];
    let receiverUrl = '';
    let tokenUrl = '';
    let clock = 1_000_000;
    beforeAll(async () => {
      const idp = createHttpServer((req, res) => {
        let text = '';
        req.on('data', (c: Buffer) => (text += c.toString()));
        req.on('end', () => {
          tokenRequests.push({ authorization: req.headers.authorization, form: new URLSearchParams(text) });
          const a = tokenAnswer();
          res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
        });
      });
      const receiver = createHttpServer(
        recordingHandler(seen, (req) => (valid.has(req.headers.authorization?.slice(7) ?? '') ? 204 : 401)),
      );
      servers.push(idp, receiver);
      tokenUrl = `http://127.0.0.1:${await listen(idp)}/connect/token`;
      receiverUrl = `http://127.0.0.1:${await listen(receiver)}/hook`;
    });
    beforeEach(() => {
      tokenAnswer = () => {
        const token = `tok-${++issued}`;
        valid.add(token);
        return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: 60 } };
      };
    });
    const creds = (): OAuth2Credentials => ({
      tokenUrl,
      clientId: 'gw client',
      clientSecret: 's3cr:et',
      scope: 'hooks',
      audience: 'rcv',
    });
    const post = (s: WebhookSender, oauth2 = creds()) =>
      s.send({
        url: receiverUrl,
        headers: { 'x-service-signature': 'sha256=ab' },
        body: '{"a":1}',
        timeoutMs: 3000,
        auth: { oauth2 },
      });

    it('fetches a token once per expiry, sends it as Bearer beside the signature, and refreshes once after a 401', async () => {
      const s = sender({ tokens: new OAuth2TokenCache({ now: () => clock, skewMs: 10_000 }) });
      expect(await post(s)).toMatchObject({ kind: 'response', status: 204 });
      expect(await post(s)).toMatchObject({ kind: 'response', status: 204 });
      expect(tokenRequests).toHaveLength(1);
      const first = tokenRequests[0]!;
      expect(first.form.get('grant_type')).toBe('client_credentials');
      expect(first.form.get('scope')).toBe('hooks');
      expect(first.form.get('audience')).toBe('rcv');
      expect(first.form.get('client_secret')).toBeNull();
      // client_secret_basic: id and secret form-encoded, then base64 (RFC 6749 §2.3.1).
      expect(first.authorization).toBe(`Basic ${Buffer.from('gw+client:s3cr%3Aet').toString('base64')}`);
      expect(seen.map((r) => r.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-1']);

      clock += 50_001; // within the skew of the 60 s token: renewed
      expect(await post(s)).toMatchObject({ status: 204 });
      expect(tokenRequests).toHaveLength(2);
      expect(seen.at(-1)!.authorization).toBe('Bearer tok-2');

      valid.delete('tok-2'); // the receiver revokes it: 401, a new token, the same body again
      seen.length = 0;
      expect(await post(s)).toMatchObject({ kind: 'response', status: 204 });
      expect(tokenRequests).toHaveLength(3);
      expect(seen.map((r) => [r.authorization, r.body])).toEqual([
        ['Bearer tok-2', '{"a":1}'],
        ['Bearer tok-3', '{"a":1}'],
      ]);

      // A receiver that refuses every token: one refresh, then its 401 is the attempt's answer.
      valid.clear();
      tokenAnswer = () => ({ status: 200, body: { access_token: `refused-${++issued}`, expires_in: 60 } });
      seen.length = 0;
      expect(await post(s)).toMatchObject({ kind: 'response', status: 401 });
      expect(seen).toHaveLength(2);
      expect(tokenRequests).toHaveLength(4);
    });

    it('client_secret_post sends the credentials in the form', async () => {
      tokenRequests.length = 0;
      const s = sender();
      expect(await post(s, { ...creds(), clientAuth: 'client_secret_post' })).toMatchObject({ status: 204 });
      expect(tokenRequests[0]!.authorization).toBeUndefined();
      expect(tokenRequests[0]!.form.get('client_id')).toBe('gw client');
      expect(tokenRequests[0]!.form.get('client_secret')).toBe('s3cr:et');
    });

    it('a failing token endpoint fails the attempt with its reason, and the receiver is not called', async () => {
      seen.length = 0;
      tokenAnswer = () => ({ status: 401, body: { error: 'invalid_client' } });
      expect(await post(sender(), { ...creds(), clientId: 'other' })).toMatchObject({
        kind: 'error',
        error: 'OAuth2 token: token endpoint answered HTTP 401: invalid_client',
        timedOut: false,
      });
      tokenAnswer = () => ({ status: 200, body: { token_type: 'Bearer' } });
      expect(await post(sender(), { ...creds(), clientId: 'other2' })).toMatchObject({
        error: 'OAuth2 token: token endpoint answered without an access_token',
      });
      const closed = `http://127.0.0.1:1/token`;
      expect(await post(sender(), { ...creds(), tokenUrl: closed })).toMatchObject({
        error: 'OAuth2 token: connection refused',
      });
      expect(seen).toHaveLength(0);
    });

    it('the token endpoint passes the SSRF guard too', async () => {
      // The receiver's name is allowed through the allow list; the token endpoint's address is not.
      const s = sender({ allowList: parseAllowList(['127.0.0.1/32']) });
      const res = await post(s, { ...creds(), tokenUrl: 'http://10.1.2.3/token' });
      expect(res).toMatchObject({ kind: 'error' });
      expect((res as { error: string }).error).toMatch(/^OAuth2 token: refused: /);
    });
  });

  describe('mutual TLS with a client certificate', () => {
    let material: Awaited<ReturnType<typeof tlsMaterial>>;
    let certDir: string;
    let url = '';
    const seen: Seen[] = [];
    beforeAll(async () => {
      material = await tlsMaterial();
      certDir = mkdtempSync(path.join(os.tmpdir(), 'hook-client-certs-'));
      writeFileSync(path.join(certDir, 'gw.crt'), material.client.cert);
      writeFileSync(path.join(certDir, 'gw.key'), material.client.key, { mode: 0o600 });
      const server = createHttpsServer(
        { ...material.server, ca: material.ca, requestCert: true, rejectUnauthorized: true },
        recordingHandler(seen, () => 204),
      );
      servers.push(server);
      url = `https://receiver.test:${await listen(server)}/hook`;
    });
    afterAll(() => rmSync(certDir, { recursive: true, force: true }));
    const post = (s: WebhookSender, clientCertificate?: string) =>
      s.send({ url, headers: {}, body: '{}', timeoutMs: 3000, auth: clientCertificate ? { clientCertificate } : null });

    it('without the certificate the receiver refuses the connection; with it the delivery is accepted', async () => {
      const s = sender({ resolve, ca: material.ca, clientCertDir: certDir });
      const refused = await post(s);
      expect(refused.kind).toBe('error');
      expect(seen).toHaveLength(0);
      expect(await post(s, 'gw')).toMatchObject({ kind: 'response', status: 204 });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.clientCn).toBe('gateway-client');
    });

    it('a certificate that is not there, or no certificate directory, fails the attempt with a clear reason', async () => {
      expect(await post(sender({ resolve, ca: material.ca, clientCertDir: certDir }), 'missing')).toMatchObject({
        kind: 'error',
        error: 'client certificate missing cannot be read (ENOENT)',
      });
      expect(await post(sender({ resolve, ca: material.ca }), 'gw')).toMatchObject({
        error: 'client certificate gw: WEBHOOK_CLIENT_CERT_DIR is not set',
      });
      expect(await post(sender({ resolve, ca: material.ca, clientCertDir: certDir }), '../gw')).toMatchObject({
        error: 'client certificate name ../gw is invalid',
      });
    });
  });

  describe('egress', () => {
    const seen: Seen[] = [];
    let port = 0;
    const connects: string[] = [];
    let proxyUrl = '';
    beforeAll(async () => {
      const receiver = createHttpServer(recordingHandler(seen, () => 204));
      servers.push(receiver);
      port = await listen(receiver);
      // A minimal CONNECT proxy: it records the tunnel's target, connects (receiver.test is 127.0.0.1 here; other
      // names do not resolve) and pipes bytes, or answers 502 as proxies do.
      const proxy = createHttpServer((_req, res) => res.writeHead(405).end());
      proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
        connects.push(`${req.url ?? ''} from ${client.remoteAddress ?? ''}`);
        const [host, p] = (req.url ?? '').split(':');
        const upstream = connect(Number(p), host === 'receiver.test' ? '127.0.0.1' : (host ?? ''), () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
        client.on('error', () => upstream.destroy());
      });
      servers.push(proxy);
      proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
    });
    beforeEach(() => {
      seen.length = 0;
      connects.length = 0;
    });

    it('leaves from the configured source address', async () => {
      const s = sender({ egress: { localAddress: '127.0.0.2' } });
      expect(
        await s.send({ url: `http://127.0.0.1:${port}/x`, headers: {}, body: '{}', timeoutMs: 3000 }),
      ).toMatchObject({ status: 204 });
      expect(seen[0]!.remoteAddress).toBe('127.0.0.2');
    });

    it('goes through the egress proxy, leaving for it from the source address', async () => {
      const s = sender({ resolve, egress: { proxyUrl, localAddress: '127.0.0.3' } });
      const res = await s.send({
        url: `http://receiver.test:${port}/x`,
        headers: {},
        body: '{"p":1}',
        timeoutMs: 3000,
      });
      expect(res).toMatchObject({ kind: 'response', status: 204 });
      expect(connects).toEqual([`receiver.test:${port} from 127.0.0.3`]);
      expect(seen.map((r) => r.body)).toEqual(['{"p":1}']);
    });

    it('a proxy that cannot reach the receiver fails the attempt', async () => {
      const names = (h: string, _o: unknown, cb: (e: null, a: Array<{ address: string; family: number }>) => void) =>
        cb(null, [{ address: h === 'nowhere.invalid' ? '192.0.2.1' : '127.0.0.1', family: 4 }]);
      const s = sender({ allowList: parseAllowList(['0.0.0.0/0']), resolve: names, egress: { proxyUrl } });
      const res = await s.send({ url: `http://nowhere.invalid:${port}/x`, headers: {}, body: '{}', timeoutMs: 3000 });
      expect(res).toMatchObject({ kind: 'error', timedOut: false });
      expect((res as { error: string }).error).toMatch(/Proxy response \(502\)/);
      expect(connects).toEqual([`nowhere.invalid:${port} from 127.0.0.1`]);
    });

    it('through the proxy, the SSRF guard still checks the receiver name first', async () => {
      const s = sender({ allowList: NONE, resolve, egress: { proxyUrl } });
      const res = await s.send({ url: `http://receiver.test:${port}/x`, headers: {}, body: '{}', timeoutMs: 3000 });
      expect(res).toMatchObject({ kind: 'error' });
      expect((res as { error: string }).error).toMatch(/^refused: /);
      expect(connects).toEqual([]);
      expect(seen).toEqual([]);
    });
  });
});
