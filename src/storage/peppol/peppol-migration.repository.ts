import { createHash } from 'node:crypto';
import { GatewayError } from '../../core/gateway-error';
import { isDuplicateKeyError } from '../connection';
import type { Models } from '../models';
import { participantKey } from './peppol-directory.repository';
import type { PeppolMigrationDoc } from './peppol-migration.schema';

export type MigrationDirection = PeppolMigrationDoc['direction'];

export interface MigrationRecord {
  id: string;
  direction: MigrationDirection;
  partyId: string;
  createdOn: Date;
}

const idOf = (direction: MigrationDirection, partyId: string, key: string) =>
  `${direction}:${participantKey(partyId)}:${createHash('sha256').update(key, 'utf8').digest('hex')}`;

/** Migration keys we prepared or used (docs/decisions.md "Participant migration"). */
export class PeppolMigrationRepository {
  constructor(private readonly models: Models) {}

  /** Records a key; a key already recorded for this participant and direction is a CONFLICT. */
  async insert(input: {
    direction: MigrationDirection;
    tenantId: string;
    partyId: string;
    key: string;
  }): Promise<MigrationRecord> {
    const doc: PeppolMigrationDoc = {
      _id: idOf(input.direction, input.partyId, input.key),
      direction: input.direction,
      participant: participantKey(input.partyId),
      tenantId: input.tenantId,
      partyId: input.partyId,
      createdOn: new Date(),
    };
    try {
      await this.models.PeppolMigration.create(doc);
    } catch (e) {
      if (isDuplicateKeyError(e))
        throw new GatewayError(
          'CONFLICT',
          input.direction === 'inbound'
            ? `this migration key was already used for ${input.partyId}`
            : `this migration key was already prepared for ${input.partyId}`,
        );
      throw e;
    }
    return { id: doc._id, direction: doc.direction, partyId: doc.partyId, createdOn: doc.createdOn };
  }

  /** Removes a record whose SML call failed, so the same key can be tried again. */
  async remove(id: string): Promise<void> {
    await this.models.PeppolMigration.deleteOne({ _id: id }).exec();
  }

  /** Whether a key was prepared for the participant (it may then have left us). */
  async hasOutbound(partyId: string): Promise<boolean> {
    const n = await this.models.PeppolMigration.countDocuments({
      participant: participantKey(partyId),
      direction: 'outbound',
    }).exec();
    return n > 0;
  }
}
