import { Schema, type Connection } from 'mongoose';

/** One document type a participant receives, with the processes it takes part in (URI forms `scheme::value`). */
export interface ServiceEntryDoc {
  documentTypeId: string;
  processIds: string[];
}

/**
 * What our SMP publishes for one of our parties. Keyed by the lower-cased Peppol participant value
 * (`0106:12345678`): our SMP looks records up by the participant in the request path, and FerretDB answers only an
 * exact `_id` filter from its key. `partyId` keeps the party's own spelling.
 */
export interface PeppolParticipantDoc {
  _id: string;
  tenantId: string;
  partyId: string;
  /** Published by our SMP and registered in the SML. */
  registered: boolean;
  services: ServiceEntryDoc[];
  /** MLS as receiving provider (spec 6.4 "reviews" capability); off by default. */
  reviews: boolean;
  /** Where the SML registration stands: `registered`, `unregistered`, `manual` (operator registers), `failed`. */
  smlState: string;
  smlError: string | null;
  smlChangedOn: Date | null;
  createdOn: Date;
  changedOn: Date;
}

/** Environment (tenant) level defaults for parties that have no configuration of their own. Keyed by tenant id. */
export interface PeppolTenantConfigDoc {
  _id: string;
  services: ServiceEntryDoc[];
  reviews: boolean;
  changedOn: Date;
}

const str = { type: String, required: true } as const;
const services = () => ({
  type: [{ _id: false, documentTypeId: str, processIds: { type: [String], default: [] as string[] } }],
  default: [] as ServiceEntryDoc[],
});

export function buildPeppolDirectoryModels(conn: Connection) {
  const participant = new Schema<PeppolParticipantDoc>(
    {
      _id: str,
      tenantId: str,
      partyId: str,
      registered: { type: Boolean, required: true },
      services: services(),
      reviews: { type: Boolean, default: false },
      smlState: str,
      smlError: { type: String, default: null },
      smlChangedOn: { type: Date, default: null },
      createdOn: { type: Date, required: true },
      changedOn: { type: Date, required: true },
    },
    { versionKey: false },
  );
  participant.index({ partyId: 1 }, { unique: true });
  participant.index({ tenantId: 1 });

  const tenantConfig = new Schema<PeppolTenantConfigDoc>(
    {
      _id: str,
      services: services(),
      reviews: { type: Boolean, default: false },
      changedOn: { type: Date, required: true },
    },
    { versionKey: false },
  );

  return {
    PeppolParticipant: conn.model<PeppolParticipantDoc>('PeppolParticipant', participant, 'peppolparticipants'),
    PeppolTenantConfig: conn.model<PeppolTenantConfigDoc>('PeppolTenantConfig', tenantConfig, 'peppoltenantconfigs'),
  };
}
