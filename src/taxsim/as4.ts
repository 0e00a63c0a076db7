/**
 * The reference tax authority as a Peppol access point (C5): the gateway's own AS4 receiver (src/peppol/as4/receiver)
 * with an in-memory message store, serving the configured participants. A stored message is judged after its receipt
 * is answered, and the MLS goes back as a separate AS4 message to the reporter's service provider.
 */
import type { X509Certificate } from 'node:crypto';
import { mlsAddress } from '../peppol/mls';
import { As4Receiver, type InboundAs4Record, type InboundAs4Store, type StoredInbound } from '../peppol/as4/receiver';
import { formatId, participantIdEquals, type ParticipantId } from '../peppol/identifiers';
import type { ApKeyRing } from '../peppol/pki/key-ring';
import type { RevocationChecker } from '../peppol/pki/revocation';
import { businessDocumentOf, readSbdHeader } from '../peppol/sbdh';
import type { Authority } from './authority';
import type { Ledger } from './ledger';
import type { MlsSender } from './mls-sender';

/** The received messages, in memory and bounded (a simulator keeps nothing across restarts). */
export class MemoryInboundStore implements InboundAs4Store {
  private readonly byMessageId = new Map<string, StoredInbound>();
  private readonly byInstanceKey = new Map<string, StoredInbound>();
  readonly sbds = new Map<string, Buffer>();

  constructor(private readonly maxMessages: number) {}

  async findByMessageId(id: string): Promise<StoredInbound | null> {
    return this.byMessageId.get(id) ?? null;
  }

  async findByInstanceKey(key: string): Promise<StoredInbound | null> {
    return this.byInstanceKey.get(key) ?? null;
  }

  async store(record: InboundAs4Record, sbd: Buffer): Promise<{ stored: StoredInbound } | { existing: StoredInbound }> {
    const existing = this.byMessageId.get(record.messageId) ?? this.byInstanceKey.get(record.instanceKey);
    if (existing) return { existing };
    if (this.byMessageId.size >= this.maxMessages)
      throw new Error(`taxsim keeps at most ${this.maxMessages} AS4 messages; POST /api/reset`);
    const stored: StoredInbound = { ...record, blobId: record.messageId, state: 'stored' };
    this.byMessageId.set(record.messageId, stored);
    this.byInstanceKey.set(record.instanceKey, stored);
    this.sbds.set(stored.blobId, sbd);
    return { stored };
  }

  reset(): void {
    this.byMessageId.clear();
    this.byInstanceKey.clear();
    this.sbds.clear();
  }
}

export interface TaxsimAs4Options {
  keys: ApKeyRing;
  apCertificateAuthorities: readonly X509Certificate[];
  revocation?: RevocationChecker;
  maxDecompressedBytes: number;
  duplicateWindowMs: number;
}

export interface TaxsimAs4Deps {
  authority: Authority;
  ledger: Ledger;
  participants: Readonly<Record<string, ParticipantId>>;
  /** Our service provider id: the MLS sender. */
  spid: ParticipantId;
  /** The MLS goes out through it; without it the MLS is recorded as not sent. */
  mlsSender?: MlsSender;
  /** Told about a report whose processing failed (the edge logs it). */
  onError: (error: unknown, messageId: string) => void;
  maxMessages: number;
}

export interface TaxsimAs4 {
  receiver: As4Receiver;
  store: MemoryInboundStore;
  /** Settles when every report received so far is judged and its MLS sent (or given up). */
  idle(): Promise<void>;
}

export function createTaxsimAs4(options: TaxsimAs4Options, deps: TaxsimAs4Deps): TaxsimAs4 {
  const store = new MemoryInboundStore(deps.maxMessages);
  const pending = new Set<Promise<void>>();
  const countryOf = (p: ParticipantId): string =>
    Object.entries(deps.participants).find(([, q]) => participantIdEquals(p, q))?.[0] ?? 'ZZ';

  const process = async (stored: StoredInbound): Promise<void> => {
    const sbd = store.sbds.get(stored.blobId);
    if (!sbd) return;
    const { header } = readSbdHeader(sbd);
    let xml: Buffer;
    try {
      xml = businessDocumentOf(sbd);
    } catch {
      xml = Buffer.alloc(0);
    }
    const address = mlsAddress({
      ...(header.mlsTo ? { mlsTo: header.mlsTo } : {}),
      sendingApCommonName: stored.fromSeatId,
    });
    const { report } = await deps.authority.judge({
      channel: 'as4',
      xml,
      receiver: header.receiver,
      as4MessageId: stored.messageId,
      sbdhInstanceId: header.instanceIdentifier,
      fromSeatId: stored.fromSeatId,
      ...(address.ok ? { mlsTo: address.to } : {}),
    });
    const mls = report.mls;
    if (!mls) return;
    if (!address.ok || !deps.mlsSender) {
      deps.ledger.setDelivery(
        report.id,
        `not sent: ${!address.ok ? address.reason : 'no AS4 sending configured (no recipient lookup)'}`,
      );
      return;
    }
    const sent = await deps.mlsSender.send({
      key: `${stored.messageId}:${report.id}`,
      xml: mls.xml,
      sender: deps.spid,
      receiver: address.to,
      countryC1: countryOf(header.receiver),
    });
    deps.ledger.setDelivery(report.id, `${sent.outcome} after ${sent.attempts} attempt(s): ${sent.detail}`);
  };

  const receiver = new As4Receiver({
    keys: options.keys,
    apCertificateAuthorities: options.apCertificateAuthorities,
    store,
    findParty: async (participant) =>
      Object.values(deps.participants).some((p) => participantIdEquals(p, participant))
        ? { tenantId: 'taxsim', partyId: formatId(participant) }
        : null,
    maxDecompressedBytes: options.maxDecompressedBytes,
    duplicateWindowMs: options.duplicateWindowMs,
    ...(options.revocation ? { revocation: options.revocation } : {}),
    onStored: async (stored) => {
      if (stored.state !== 'stored') return;
      // Judged once, after the receipt: the sender's resend of the same message is answered with the receipt only.
      stored.state = 'judging';
      const run = process(stored)
        .catch((e) => deps.onError(e, stored.messageId))
        .finally(() => {
          stored.state = 'judged';
          pending.delete(run);
        });
      pending.add(run);
    },
  });

  return {
    receiver,
    store,
    idle: async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}
