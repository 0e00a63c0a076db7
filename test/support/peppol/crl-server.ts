import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { answerOcsp, type OcspBehaviour } from './ocsp-responder';

/**
 * A real HTTP server on 127.0.0.1 serving CRL files by path (and OCSP responders, POST), and an undici dispatcher that sends every connection to
 * it whatever host a URL names — so certificates whose distribution points name a host that never resolves (the
 * test PKI's) are fetched from here, over a real socket, as a DNS entry pointing at us would do.
 */
export interface CrlServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  dispatcher: Agent;
  /** Path → body, or a status code to answer instead. */
  files: Map<string, Buffer | number>;
  /** Requests per path. */
  hits: Map<string, number>;
  /** OCSP responders by path (POST). */
  ocsp: Map<string, OcspBehaviour>;
  close(): Promise<void>;
}

export async function startCrlServer(): Promise<CrlServer> {
  const files = new Map<string, Buffer | number>();
  const hits = new Map<string, number>();
  const ocsp = new Map<string, OcspBehaviour>();
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const responder = ocsp.get(p);
    if (responder && req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/ocsp-response' })
          .end(answerOcsp(Buffer.concat(chunks), responder)),
      );
      return;
    }
    const f = files.get(p);
    if (f === undefined) res.writeHead(404).end();
    else if (typeof f === 'number') res.writeHead(f).end();
    else res.writeHead(200, { 'content-type': 'application/pkix-crl' }).end(f);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const connect = buildConnector({});
  const dispatcher = new Agent({
    connect: (opts, callback) =>
      connect(
        { ...opts, hostname: '127.0.0.1', host: `127.0.0.1:${port}`, port: String(port), protocol: 'http:' },
        callback,
      ),
  });
  return {
    url: `http://127.0.0.1:${port}`,
    dispatcher,
    files,
    hits,
    ocsp,
    close: async () => {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
