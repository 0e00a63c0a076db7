import { GatewayError } from '../../core/gateway-error';
import { isDuplicateKeyError } from '../connection';
import { withLease } from '../lease';
import type { Models } from '../models';
import type { PeppolParticipantDoc, PeppolTenantConfigDoc, ServiceEntryDoc } from './peppol-directory.schema';

export type ServiceEntry = ServiceEntryDoc;
export type SmlState = 'registered' | 'unregistered' | 'manual' | 'failed' | 'pending';

export interface PeppolParticipantRecord {
  tenantId: string;
  partyId: string;
  registered: boolean;
  services: ServiceEntry[];
  reviews: boolean;
  smlState: SmlState;
  smlError: string | null;
  smlChangedOn: Date | null;
  createdOn: Date;
  changedOn: Date;
}

export interface PeppolTenantConfigRecord {
  tenantId: string;
  services: ServiceEntry[];
  reviews: boolean;
  changedOn: Date;
}

/**
 * The record key: participant values of `iso6523-actorid-upis` compare case-insensitively, so the key is lower-cased.
 */
export function participantKey(partyId: string): string {
  return partyId.toLowerCase();
}

const copyServices = (s: readonly ServiceEntryDoc[] | undefined): ServiceEntry[] =>
  (s ?? []).map((e) => ({ documentTypeId: e.documentTypeId, processIds: [...(e.processIds ?? [])] }));

function toRecord(d: PeppolParticipantDoc): PeppolParticipantRecord {
  return {
    tenantId: d.tenantId,
    partyId: d.partyId,
    registered: d.registered,
    services: copyServices(d.services),
    reviews: d.reviews ?? false,
    smlState: d.smlState as SmlState,
    smlError: d.smlError ?? null,
    smlChangedOn: d.smlChangedOn ?? null,
    createdOn: d.createdOn,
    changedOn: d.changedOn,
  };
}

/**
 * Our SMP's data (which of our parties receive what) and the environment-level defaults. Single-document writes keyed
 * by `_id`, as FerretDB needs; a participant belongs to exactly one party (unique `partyId`, and the key itself).
 */
export class PeppolDirectoryRepository {
  constructor(private readonly models: Models) {}

  /** The configuration of a party, or null when it has none. */
  async getParticipant(partyId: string): Promise<PeppolParticipantRecord | null> {
    const doc = await this.models.PeppolParticipant.findById(participantKey(partyId))
      .lean<PeppolParticipantDoc>()
      .exec();
    return doc && doc.partyId === partyId ? toRecord(doc) : null;
  }

  /** What our SMP serves for a participant value (any case), or null. */
  async findByParticipantValue(value: string): Promise<PeppolParticipantRecord | null> {
    const doc = await this.models.PeppolParticipant.findById(participantKey(value)).lean<PeppolParticipantDoc>().exec();
    return doc ? toRecord(doc) : null;
  }

  /**
   * Creates or replaces a party's configuration (not its SML state). A participant held by another party (the same
   * value in another case) is a CONFLICT.
   */
  /**
   * Writes a party's configuration. Configuration and SML state are written under the participant's lease (the
   * database has no atomic update: two writers of one record would lose one's fields; docs/decisions.md).
   */
  putParticipant(input: {
    tenantId: string;
    partyId: string;
    registered: boolean;
    services: ServiceEntry[];
    reviews: boolean;
  }): Promise<PeppolParticipantRecord> {
    return withLease(this.models.Lease, `peppol-participant:${participantKey(input.partyId)}`, () =>
      this.writeParticipant(input),
    );
  }

  private async writeParticipant(input: {
    tenantId: string;
    partyId: string;
    registered: boolean;
    services: ServiceEntry[];
    reviews: boolean;
  }): Promise<PeppolParticipantRecord> {
    const key = participantKey(input.partyId);
    const existing = await this.models.PeppolParticipant.findById(key).lean<PeppolParticipantDoc>().exec();
    if (existing && (existing.partyId !== input.partyId || existing.tenantId !== input.tenantId)) {
      throw new GatewayError('CONFLICT', `the Peppol participant ${key} is already configured for another party`);
    }
    const now = new Date();
    const set = {
      tenantId: input.tenantId,
      partyId: input.partyId,
      registered: input.registered,
      services: copyServices(input.services),
      reviews: input.reviews,
      changedOn: now,
    };
    try {
      const doc = await this.models.PeppolParticipant.findOneAndUpdate(
        { _id: key },
        // The SML state is written by setSmlState only; a new record starts unregistered.
        { $set: set, $setOnInsert: { createdOn: now, smlState: 'unregistered', smlError: null, smlChangedOn: null } },
        { upsert: true, returnDocument: 'after' },
      )
        .lean<PeppolParticipantDoc>()
        .exec();
      if (!doc) throw new Error('upsert returned no document');
      return toRecord(doc);
    } catch (e) {
      if (isDuplicateKeyError(e))
        throw new GatewayError('CONFLICT', `the Peppol participant ${key} is already configured for another party`);
      throw e;
    }
  }

  /** Records the outcome of an SML (un)registration. */
  setSmlState(partyId: string, state: SmlState, error: string | null = null): Promise<PeppolParticipantRecord | null> {
    return withLease(this.models.Lease, `peppol-participant:${participantKey(partyId)}`, async () => {
      const now = new Date();
      const doc = await this.models.PeppolParticipant.findOneAndUpdate(
        { _id: participantKey(partyId) },
        { $set: { smlState: state, smlError: error, smlChangedOn: now } },
        { returnDocument: 'after' },
      )
        .lean<PeppolParticipantDoc>()
        .exec();
      return doc ? toRecord(doc) : null;
    });
  }

  async getTenantConfig(tenantId: string): Promise<PeppolTenantConfigRecord | null> {
    const doc = await this.models.PeppolTenantConfig.findById(tenantId).lean<PeppolTenantConfigDoc>().exec();
    return doc
      ? {
          tenantId: doc._id,
          services: copyServices(doc.services),
          reviews: doc.reviews ?? false,
          changedOn: doc.changedOn,
        }
      : null;
  }

  async putTenantConfig(
    tenantId: string,
    input: { services: ServiceEntry[]; reviews: boolean },
  ): Promise<PeppolTenantConfigRecord> {
    const changedOn = new Date();
    await withLease(this.models.Lease, `peppol-tenant-config:${tenantId}`, () =>
      this.models.PeppolTenantConfig.updateOne(
        { _id: tenantId },
        { $set: { services: copyServices(input.services), reviews: input.reviews, changedOn } },
        { upsert: true },
      ).exec(),
    );
    return { tenantId, services: copyServices(input.services), reviews: input.reviews, changedOn };
  }
}
