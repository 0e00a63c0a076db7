import { Schema, type Connection } from 'mongoose';

/**
 * Which document an SBDH InstanceIdentifier we sent carries: an MLS names the business document it answers by that
 * identifier only (MLS 1.0, DocumentReference/ID), so the receive path finds the sales invoice here. One record per
 * identifier, inserted before the first AS4 attempt and never changed (a retried attempt's insert meets its key).
 */
export interface SentInstance {
  /** The SBDH InstanceIdentifier. */
  instanceId: string;
  tenantId: string;
  documentId: string;
  partyId: string;
  /** The resend generation whose message carried it (0: the upload's own run). */
  generation: number;
  /** A tax report (Tax Data Document): the invoice it reports, whose reportTax run waits for the authority's MLS. */
  reportOf?: string;
  /** Which report of that invoice, when not its first (2, 3, …: a report asked for through the API). */
  reportSequence?: number;
}

export interface SentInstanceDoc extends Omit<SentInstance, 'instanceId'> {
  _id: string;
  at: Date;
}

const str = { type: String, required: true } as const;

export function buildSentInstanceModels(conn: Connection) {
  const schema = new Schema<SentInstanceDoc>(
    {
      _id: str,
      tenantId: str,
      documentId: str,
      partyId: str,
      generation: { type: Number, required: true },
      reportOf: { type: String },
      reportSequence: { type: Number },
      at: { type: Date, required: true },
    },
    { versionKey: false },
  );
  return { SentInstance: conn.model<SentInstanceDoc>('SentInstance', schema, 'peppolsentinstances') };
}
