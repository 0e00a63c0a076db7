import { Schema, type Connection } from 'mongoose';

/**
 * Which document of ours a business reference names: a received Invoice Response names the invoice it answers by the
 * invoice number (BT-1) and issue date and is addressed to its seller; an Order Response names the order by its
 * number and is addressed to its buyer. One record per (tenant, our endpoint, kind, number), inserted before the
 * first AS4 attempt of the document and never changed: the first document sent under a number keeps it (numbers are
 * unique per issuer in EN 16931 and the ordering BIS).
 */
export interface SentReference {
  tenantId: string;
  /** Our party's Peppol endpoint the document went from (`0106:12345678`, lower-case). */
  endpoint: string;
  kind: 'invoice' | 'order';
  /** The document's own number (Invoice/ID, Order/ID). */
  number: string;
  issueDate: string | null;
  documentId: string;
  partyId: string;
  generation: number;
}

export interface SentReferenceDoc extends SentReference {
  _id: string;
  at: Date;
}

export function sentReferenceKey(r: Pick<SentReference, 'tenantId' | 'endpoint' | 'kind' | 'number'>): string {
  return `${r.tenantId}|${r.endpoint.toLowerCase()}|${r.kind}|${r.number}`;
}

const str = { type: String, required: true } as const;

export function buildSentReferenceModels(conn: Connection) {
  const schema = new Schema<SentReferenceDoc>(
    {
      _id: str,
      tenantId: str,
      endpoint: str,
      kind: str,
      number: str,
      issueDate: { type: String, default: null },
      documentId: str,
      partyId: str,
      generation: { type: Number, required: true },
      at: { type: Date, required: true },
    },
    { versionKey: false },
  );
  return { SentReference: conn.model<SentReferenceDoc>('SentReference', schema, 'peppolsentreferences') };
}
