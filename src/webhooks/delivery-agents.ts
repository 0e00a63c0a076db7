import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LookupFunction } from 'node:net';
import { Agent, Pool, ProxyAgent, type Dispatcher } from 'undici';

/**
 * The connection pools deliveries go out on: one per client certificate in use (mutual TLS, spec 5 item 12) besides
 * the plain one, each with the SSRF guard's lookup, and all leaving from the configured egress (spec 8: receivers
 * allow-list the gateway's source addresses): a fixed source address (`localAddress`) and/or an HTTP(S) proxy
 * (CONNECT tunnel, undici's ProxyAgent). Through a proxy the proxy connects to the receiver, so the guard checks the
 * receiver's name before the request (`precheck`) and the proxy's own policy is the last word on where it connects.
 */

export interface EgressOptions {
  localAddress?: string | undefined;
  proxyUrl?: string | undefined;
}

export interface DeliveryAgentOptions {
  lookup: LookupFunction;
  connectTimeoutMs: number;
  egress?: EgressOptions | undefined;
  /** Directory of `<name>.crt` / `<name>.key` (PEM); without it no hook can use a client certificate. */
  clientCertDir?: string | undefined;
  /** Extra CA certificates (PEM) receivers' certificates may chain to, besides the system's. */
  ca?: string | undefined;
}

/** A hook's client certificate cannot be used; the message is the delivery log's reason. */
export class ClientCertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientCertificateError';
  }
}

const CERT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isClientCertificateName(name: string): boolean {
  return CERT_NAME.test(name);
}

export class DeliveryAgents {
  private readonly plain: Dispatcher;
  private readonly withCertificate = new Map<string, Dispatcher>();

  constructor(private readonly options: DeliveryAgentOptions) {
    this.plain = this.build({});
  }

  /** The pool for a delivery: the hook's client certificate's, or the plain one. */
  dispatcherFor(clientCertificate: string | null | undefined): Dispatcher {
    if (!clientCertificate) return this.plain;
    let d = this.withCertificate.get(clientCertificate);
    if (!d) {
      d = this.build(this.readCertificate(clientCertificate));
      this.withCertificate.set(clientCertificate, d);
    }
    return d;
  }

  /** Through a proxy the guard's lookup never runs on the receiver's name: it is checked here first. */
  async precheck(target: URL): Promise<void> {
    if (!this.options.egress?.proxyUrl) return;
    const host = target.hostname.replace(/^\[|\]$/g, '');
    await new Promise<void>((resolve, reject) =>
      this.options.lookup(host, { all: true }, (err) => (err ? reject(err) : resolve())),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.plain, ...this.withCertificate.values()].map((d) => d.close()));
  }

  private readCertificate(name: string): { cert: string; key: string } {
    const dir = this.options.clientCertDir;
    if (!dir) throw new ClientCertificateError(`client certificate ${name}: WEBHOOK_CLIENT_CERT_DIR is not set`);
    if (!isClientCertificateName(name)) throw new ClientCertificateError(`client certificate name ${name} is invalid`);
    try {
      return {
        cert: readFileSync(path.join(dir, `${name}.crt`), 'utf8'),
        key: readFileSync(path.join(dir, `${name}.key`), 'utf8'),
      };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      throw new ClientCertificateError(`client certificate ${name} cannot be read (${String(code ?? e)})`);
    }
  }

  private build(tls: { cert?: string; key?: string }): Dispatcher {
    const { lookup, connectTimeoutMs, egress, ca } = this.options;
    const localAddress = egress?.localAddress;
    const extra = { ...tls, ...(ca ? { ca } : {}) };
    if (egress?.proxyUrl) {
      return new ProxyAgent({
        uri: egress.proxyUrl,
        keepAliveTimeout: 10_000,
        // The tunnelled connection to the receiver: its TLS, with the client certificate.
        requestTls: { timeout: connectTimeoutMs, ...extra },
        proxyTls: { timeout: connectTimeoutMs },
        // The connection to the proxy leaves from the source address.
        clientFactory: (origin, opts) => new Pool(origin, { ...opts, ...(localAddress ? { localAddress } : {}) }),
      });
    }
    return new Agent({
      connect: { lookup, timeout: connectTimeoutMs, ...extra },
      ...(localAddress ? { localAddress } : {}),
      keepAliveTimeout: 10_000,
    });
  }
}
