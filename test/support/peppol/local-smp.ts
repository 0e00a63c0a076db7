/**
 * A tiny Peppol SMP 1.x on 127.0.0.1 for tests: serves ServiceGroup and SignedServiceMetadata documents signed with a
 * test SMP key, plus hooks to break responses on purpose (status codes, tampering, silence).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  formatId,
  participantIdEquals,
  type DocumentTypeId,
  type ParticipantId,
} from '../../../src/peppol/identifiers';
import type { KeyMaterial } from '../../../src/peppol/pki/key-material';
import {
  buildRedirectXml,
  buildServiceGroupXml,
  buildServiceMetadataXml,
  signServiceMetadata,
  type SmpProcessInput,
} from '../../../src/peppol/smp-documents';

type Responder = (res: http.ServerResponse) => void;

interface Registration {
  participant: ParticipantId;
  services: Map<string, { documentType: DocumentTypeId; body: () => string }>;
}

export class LocalSmp {
  readonly requests: string[] = [];
  private readonly registrations: Registration[] = [];
  private readonly overrides = new Map<string, Responder>();
  private server: http.Server | undefined;
  private port = 0;

  constructor(
    private readonly signer: KeyMaterial,
    /** Path prefix of the SMP API, e.g. '/smp' (an SMP URL from DNS may have a path). */
    private readonly basePath = '',
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.basePath}`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private registration(participant: ParticipantId): Registration {
    let r = this.registrations.find((x) => participantIdEquals(x.participant, participant));
    if (!r) this.registrations.push((r = { participant, services: new Map() }));
    return r;
  }

  /** Publishes signed service metadata; `mutate` may change the signed text before it is served (tampering). */
  publish(
    participant: ParticipantId,
    documentType: DocumentTypeId,
    processes: SmpProcessInput[],
    options: { signer?: KeyMaterial | null; mutate?: (signed: string) => string; answerFor?: ParticipantId } = {},
  ): void {
    const signer = options.signer === undefined ? this.signer : options.signer;
    const xml = buildServiceMetadataXml(options.answerFor ?? participant, documentType, processes);
    const signed = signer ? signServiceMetadata(xml, signer) : xml;
    const body = options.mutate ? options.mutate(signed) : signed;
    this.registration(participant).services.set(formatId(documentType), { documentType, body: () => body });
  }

  /** Publishes a signed redirect to the same resource at another SMP. */
  redirect(participant: ParticipantId, documentType: DocumentTypeId, href: string, certificateUid: string): void {
    const body = signServiceMetadata(buildRedirectXml(href, certificateUid), this.signer);
    this.registration(participant).services.set(formatId(documentType), { documentType, body: () => body });
  }

  /** A participant known to the SMP without any document type. */
  register(participant: ParticipantId): void {
    this.registration(participant);
  }

  /** Answers every request whose decoded path is `path` (without base path) with `responder`. */
  override(path: string, responder: Responder): void {
    this.overrides.set(path, responder);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const raw = (req.url ?? '/').split('?')[0] as string;
    this.requests.push(raw);
    if (!raw.startsWith(`${this.basePath}/`)) return void res.writeHead(404).end();
    const segments = raw
      .slice(this.basePath.length + 1)
      .split('/')
      .map(decodeURIComponent);
    const override = this.overrides.get(`/${segments.join('/')}`);
    if (override) return override(res);

    const [pid, services, docType] = segments;
    const sep = pid?.indexOf('::') ?? -1;
    const reg =
      pid && sep > 0
        ? this.registrations.find((r) =>
            participantIdEquals(r.participant, { scheme: pid.slice(0, sep), value: pid.slice(sep + 2) }),
          )
        : undefined;
    if (!reg) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    if (segments.length === 1) {
      const docTypes = [...reg.services.values()].map((s) => s.documentType);
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(buildServiceGroupXml(this.url, reg.participant, docTypes));
    }
    const service = services === 'services' && docType ? reg.services.get(docType) : undefined;
    if (!service) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'application/xml' }).end(service.body());
  }
}
