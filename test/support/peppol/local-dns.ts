/**
 * A real authoritative DNS server on 127.0.0.1 (dns2, UDP) serving one in-memory zone, for SML lookups in tests.
 * dns2 has no NAPTR type, so NAPTR RDATA (RFC 3403 §4.1) is encoded here and handed over as raw record data.
 */
import dns2 from 'dns2';

export type ZoneRecord =
  | {
      type: 'NAPTR';
      order: number;
      preference: number;
      flags: string;
      service: string;
      regexp: string;
      replacement?: string;
    }
  | { type: 'CNAME'; target: string }
  | { type: 'A'; address: string };

const TYPE_NAPTR = 35;
const TYPE_CNAME = 5;
const TYPE_A = 1;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

function characterString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  if (b.length > 255) throw new Error('character-string longer than 255 bytes');
  return Buffer.concat([Buffer.from([b.length]), b]);
}

function domainName(name: string): Buffer {
  const labels = name
    .replace(/\.$/, '')
    .split('.')
    .filter((l) => l.length > 0);
  return Buffer.concat([...labels.map((l) => characterString(l)), Buffer.from([0])]);
}

export function naptrRdata(r: Extract<ZoneRecord, { type: 'NAPTR' }>): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(r.order, 0);
  head.writeUInt16BE(r.preference, 2);
  return Buffer.concat([
    head,
    characterString(r.flags),
    characterString(r.service),
    characterString(r.regexp),
    domainName(r.replacement ?? ''),
  ]);
}

interface Question {
  name: string;
  type: number;
}
interface DnsPacket {
  header: { rcode: number; aa: number };
  questions: Question[];
  answers: unknown[];
}
interface DnsServer {
  listen(options: { udp: { port: number; address: string } }): Promise<{ udp: { port: number } }>;
  close(): Promise<void>;
}
const Packet = (dns2 as unknown as { Packet: { createResponseFromRequest(req: DnsPacket): DnsPacket } }).Packet;
const createServer = (
  dns2 as unknown as {
    createServer(o: { udp: boolean; handle: (req: DnsPacket, send: (res: DnsPacket) => void) => void }): DnsServer;
  }
).createServer;

export class LocalDnsZone {
  /** Every question seen, as `TYPE name`. */
  readonly queries: string[] = [];
  private readonly records = new Map<string, ZoneRecord[]>();
  private readonly failing = new Set<string>();
  private server: DnsServer | undefined;
  private port = 0;

  /** `127.0.0.1:<port>`, for `Resolver.setServers`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  set(name: string, records: ZoneRecord[]): void {
    this.records.set(name.toLowerCase().replace(/\.$/, ''), records);
  }

  /** Removes every record of `name` (it then answers NXDOMAIN). */
  remove(name: string): void {
    this.records.delete(name.toLowerCase().replace(/\.$/, ''));
  }

  /** Answer SERVFAIL for this name (a broken or unreachable authority). */
  fail(name: string): void {
    this.failing.add(name.toLowerCase().replace(/\.$/, ''));
  }

  async start(): Promise<this> {
    const server = createServer({ udp: true, handle: (req, send) => send(this.answer(req)) });
    const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
    this.server = server;
    this.port = addresses.udp.port;
    return this;
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }

  private answer(req: DnsPacket): DnsPacket {
    const res = Packet.createResponseFromRequest(req);
    res.header.aa = 1;
    const q = req.questions[0];
    if (!q) return res;
    const name = q.name.toLowerCase().replace(/\.$/, '');
    const typeName =
      q.type === TYPE_NAPTR ? 'NAPTR' : q.type === TYPE_CNAME ? 'CNAME' : q.type === TYPE_A ? 'A' : String(q.type);
    this.queries.push(`${typeName} ${name}`);
    if (this.failing.has(name)) {
      res.header.rcode = RCODE_SERVFAIL;
      return res;
    }
    const records = this.records.get(name);
    if (!records) {
      res.header.rcode = RCODE_NXDOMAIN;
      return res;
    }
    for (const r of records) {
      if (r.type === 'NAPTR' && q.type === TYPE_NAPTR)
        res.answers.push({ name: q.name, type: TYPE_NAPTR, class: 1, ttl: 60, data: naptrRdata(r) });
      if (r.type === 'CNAME' && (q.type === TYPE_CNAME || q.type === TYPE_A))
        res.answers.push({ name: q.name, type: TYPE_CNAME, class: 1, ttl: 60, domain: r.target });
      if (r.type === 'A' && q.type === TYPE_A)
        res.answers.push({ name: q.name, type: TYPE_A, class: 1, ttl: 60, address: r.address });
    }
    return res;
  }
}
