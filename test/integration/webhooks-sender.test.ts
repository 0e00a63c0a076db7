import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { WebhookSender } from '../../src/webhooks/http-sender';
import { parseAllowList } from '../../src/webhooks/ssrf-guard';
import { startReceiver, type TestReceiver } from '../support/webhook-harness';

/*
 * The HTTP edge of a delivery attempt against real servers on 127.0.0.1: every outcome a receiver or the network can
 * produce becomes a result (never an exception), and the SSRF guard refuses before a byte reaches a forbidden address.
 */

const LOOPBACK = parseAllowList(['127.0.0.0/8', '::1/128']);
const NONE = parseAllowList([]);

/** A server that answers a TLS ClientHello with plain text: the handshake fails on the client. */
async function notTlsServer(): Promise<{ server: NetServer; port: number }> {
  const server = createNetServer((socket) => {
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n', () => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('WebhookSender against real receivers', () => {
  let r: TestReceiver;
  let other: TestReceiver;
  const senders: WebhookSender[] = [];
  const sender = (allowList = LOOPBACK, extra: Partial<ConstructorParameters<typeof WebhookSender>[0]> = {}) => {
    const s = new WebhookSender({ allowList, allowHttp: true, userAgent: 'test', ...extra });
    senders.push(s);
    return s;
  };
  const post = (s: WebhookSender, url: string, timeoutMs = 2000) =>
    s.send({ url, headers: { 'x-test': '1' }, body: '{"a":1}', timeoutMs });

  beforeAll(async () => {
    r = await startReceiver();
    other = await startReceiver();
  });
  afterAll(async () => {
    for (const s of senders) await s.close();
    await r.close();
    await other.close();
  });
  beforeEach(() => {
    r.requests.length = 0;
    other.requests.length = 0;
    r.reply = () => ({ status: 204 });
  });

  it('posts the body with the given headers and reports status, latency and Retry-After', async () => {
    r.reply = () => ({ status: 503, headers: { 'Retry-After': '7' } });
    const res = await post(sender(), `${r.url}/x`);
    expect(res).toMatchObject({ kind: 'response', status: 503, retryAfter: '7' });
    expect(r.requests[0]).toMatchObject({ method: 'POST', url: '/x' });
    expect(r.requests[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'test',
      'x-test': '1',
    });
    expect(r.requests[0]!.rawBody.toString()).toBe('{"a":1}');
  });

  it('turns URL credentials into Basic authentication and keeps them out of the request line', async () => {
    await post(sender(), `http://us%40er:p%3Ass@127.0.0.1:${r.port}/cred`);
    expect(r.requests[0]!.headers['authorization']).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
    expect(r.requests[0]!.url).toBe('/cred');
  });

  it('reports a timeout, a reset and a refused connection as failures', async () => {
    r.reply = () => 'hang';
    const t0 = Date.now();
    expect(await post(sender(), r.url, 300)).toMatchObject({
      kind: 'error',
      timedOut: true,
      error: 'timeout after 0.3 s',
    });
    expect(Date.now() - t0).toBeLessThan(2000);
    r.reply = () => 'reset';
    expect(await post(sender(), r.url)).toMatchObject({ kind: 'error', timedOut: false, error: 'connection reset' });
    const closed = await startReceiver();
    const port = closed.port;
    await closed.close();
    expect(await post(sender(), `http://127.0.0.1:${port}/`)).toMatchObject({
      kind: 'error',
      error: 'connection refused',
    });
  });

  it('does not follow redirects', async () => {
    r.reply = () => ({ status: 302, headers: { Location: `${other.url}/elsewhere` } });
    expect(await post(sender(), r.url)).toMatchObject({ kind: 'response', status: 302 });
    await new Promise((res) => setTimeout(res, 100));
    expect(other.requests).toHaveLength(0);
  });

  it('reports a failed TLS handshake as a TLS failure', async () => {
    const { server, port } = await notTlsServer();
    try {
      const res = await post(sender(), `https://127.0.0.1:${port}/`);
      expect(res.kind).toBe('error');
      expect(res.kind === 'error' && res.error).toMatch(/^TLS: \w/);
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
  });

  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p}/`],
    ['127.1', (p: number) => `http://127.1:${p}/`],
    ['2130706433', (p: number) => `http://2130706433:${p}/`],
    ['0x7f.0.0.1', (p: number) => `http://0x7f.0.0.1:${p}/`],
    ['0177.0.0.1', (p: number) => `http://0177.0.0.1:${p}/`],
    ['[::ffff:127.0.0.1]', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
    ['[::1]', (p: number) => `http://[::1]:${p}/`],
    ['localhost', (p: number) => `http://localhost:${p}/`],
  ])('refuses %s without connecting when loopback is not allowed', async (_spelling, url) => {
    const res = await post(sender(NONE), url(r.port));
    expect(res).toMatchObject({ kind: 'error', timedOut: false });
    expect(res.kind === 'error' && res.error).toMatch(/^refused: /);
    expect(r.requests).toHaveLength(0);
  });

  it('checks the address actually connected: a name that resolves to loopback is refused at connect time', async () => {
    // A customer's name that resolves to loopback (as a rebinding DNS answer does after registration passed).
    const rebinding = sender(NONE, {
      resolve: (_host, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    const res = await post(rebinding, `http://hooks.customer.example:${r.port}/`);
    expect(res).toMatchObject({ kind: 'error' });
    expect(res.kind === 'error' && res.error).toMatch(
      /^refused: Refused to connect to hooks\.customer\.example: 127\.0\.0\.1/,
    );
    expect(r.requests).toHaveLength(0);

    // The same name is reached when the operator allows loopback.
    const allowed = sender(LOOPBACK, {
      resolve: (_host, _opts, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    expect(await post(allowed, `http://hooks.customer.example:${r.port}/`)).toMatchObject({
      kind: 'response',
      status: 204,
    });
  });

  it('reports a name that does not resolve as a DNS failure', async () => {
    const s = sender(NONE, {
      resolve: (host, _opts, cb) =>
        cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []),
    });
    expect(await post(s, 'https://no-such-host.invalid/')).toMatchObject({
      kind: 'error',
      error: 'DNS: name not found',
    });
  });

  it('refuses plain http unless allowed', async () => {
    const strict = new WebhookSender({ allowList: LOOPBACK, allowHttp: false, userAgent: 'test' });
    senders.push(strict);
    expect(await post(strict, r.url)).toMatchObject({ kind: 'error', error: 'refused: the URL must use https' });
    expect(r.requests).toHaveLength(0);
  });
});
