import { Schema, type Connection } from 'mongoose';

/** A received AS4 message as the receiver stores it (src/peppol/as4/receiver.ts works on this shape). */
export interface As4InboundRecord {
  messageId: string;
  /** `<sender participant>|<SBDH InstanceIdentifier>`: unique, so one sender cannot deliver one document twice. */
  instanceKey: string;
  instanceId: string;
  tenantId: string;
  partyId: string;
  sender: string;
  receiver: string;
  documentType: string;
  process: string;
  countryC1: string | undefined;
  fromSeatId: string;
  toSeatId: string;
  signerSha256: string;
  size: number;
  sha256: string;
  /** SHA-256 over the signed references (URI, transforms, digests): equal for a bit-identical resend. */
  referencesSha256: string;
  receiptXml: string;
  receivedAt: Date;
}

/**
 * A Peppol AS4 message this access point received and stored: the SBD bytes live in the blob store (`blobId`), the
 * record keeps what duplicate detection and the receive processing need, and the signed receipt that was answered (a
 * duplicate gets the same receipt back). Keyed by the AS4 MessageId (a key lookup on FerretDB); the unique
 * `instanceKey` (sender and SBDH InstanceIdentifier) stops one document from being stored twice under different message
 * ids.
 */
export interface As4InboundDoc extends Omit<As4InboundRecord, 'messageId' | 'countryC1'> {
  /** The AS4 MessageId. */
  _id: string;
  countryC1: string | null;
  blobId: string;
  /** `stored`, then what the receive workflow found: `detected` (with `format`) or `rejected` (with `stateDetail`). */
  state: string;
  stateDetail: string | null;
  format: Record<string, unknown> | null;
}

const str = { type: String, required: true } as const;

export function buildAs4Models(conn: Connection) {
  const inbound = new Schema<As4InboundDoc>(
    {
      _id: str,
      instanceKey: str,
      instanceId: str,
      tenantId: str,
      partyId: str,
      sender: str,
      receiver: str,
      documentType: str,
      process: str,
      countryC1: { type: String, default: null },
      fromSeatId: str,
      toSeatId: str,
      signerSha256: str,
      blobId: str,
      size: { type: Number, required: true },
      sha256: str,
      referencesSha256: str,
      receiptXml: str,
      receivedAt: { type: Date, required: true },
      state: { type: String, default: 'stored' },
      stateDetail: { type: String, default: null },
      format: { type: Schema.Types.Mixed, default: null },
    },
    { versionKey: false },
  );
  inbound.index({ instanceKey: 1 }, { unique: true });
  inbound.index({ tenantId: 1, partyId: 1, receivedAt: -1 });
  return { As4Inbound: conn.model<As4InboundDoc>('As4Inbound', inbound, 'as4inbound') };
}
