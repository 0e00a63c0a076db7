import { Schema, type Connection } from 'mongoose';
import type { PeppolReportingItem } from '../../reporting/peppol/types';

/**
 * One record per AS4 message exchanged (`peppolreportingitems`), keyed `<direction>:<AS4 MessageId>`: inserted once
 * when the exchange is settled and never changed; a second insert of the same message meets the key and is a no-op.
 */
export interface ReportingItemDoc extends Omit<PeppolReportingItem, 'countryC4'> {
  _id: string;
  countryC4?: string;
}

const str = { type: String, required: true } as const;

export function buildReportingItemModels(conn: Connection) {
  const schema = new Schema<ReportingItemDoc>(
    {
      _id: str,
      direction: str,
      messageId: str,
      exchangedAt: { type: Date, required: true },
      otherSeatId: { type: String, default: '' },
      documentTypeScheme: str,
      documentTypeValue: str,
      processScheme: str,
      processValue: str,
      transportProtocol: str,
      countryC1: str,
      countryC4: { type: String, required: false },
      endUserId: str,
      mls: { type: Boolean, required: true },
      networkReport: { type: Boolean, required: true },
    },
    { versionKey: false },
  );
  schema.index({ exchangedAt: 1 });
  return { ReportingItem: conn.model<ReportingItemDoc>('ReportingItem', schema, 'peppolreportingitems') };
}
