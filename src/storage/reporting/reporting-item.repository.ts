import type { Model } from 'mongoose';
import { isDuplicateKeyError } from '../connection';
import type { PeppolReportingItem } from '../../reporting/peppol/types';
import type { ReportingItemDoc } from './reporting-item.schema';

/** The reporting items (`peppolreportingitems`): keyed inserts, read by month. */
export class ReportingItemRepository {
  constructor(private readonly models: { ReportingItem: Model<ReportingItemDoc> }) {}

  /** Records the message once; true when this call wrote it (false: it was recorded before). */
  async record(item: PeppolReportingItem): Promise<boolean> {
    try {
      await this.models.ReportingItem.create({ _id: `${item.direction}:${item.messageId}`, ...item });
      return true;
    } catch (e) {
      if (isDuplicateKeyError(e)) return false;
      throw e;
    }
  }

  /** The messages exchanged in [from, to). */
  async listBetween(from: Date, to: Date): Promise<PeppolReportingItem[]> {
    const docs = await this.models.ReportingItem.find({ exchangedAt: { $gte: from, $lt: to } })
      .sort({ exchangedAt: 1, _id: 1 })
      .lean<ReportingItemDoc[]>()
      .exec();
    return docs.map(({ _id, countryC4, ...rest }) => ({
      ...rest,
      exchangedAt: new Date(rest.exchangedAt),
      ...(countryC4 !== undefined && countryC4 !== null ? { countryC4 } : {}),
    }));
  }
}
