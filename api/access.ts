import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../src/core/gateway-error';
import { isPartyId, isUuid } from '../src/core/identifiers';
import type { DirectoryRepository, PartyRecord } from '../src/storage/directory.repository';
import { principalOf, type Principal } from '../src/auth/authenticate';
import { queryString } from './request';

/**
 * Which parties a principal reaches: its client's tenants, narrowed to the user's linked parties for a password token.
 */
export function canReachParty(principal: Principal, party: PartyRecord): boolean {
  if (!principal.tenantIds.includes(party.tenantId)) return false;
  if (principal.grantType === 'password') return (principal.partyIds ?? []).includes(party.partyId);
  return true;
}

/**
 * Guards every `{partyId}` path. A party outside the caller's reach gets the same 403 whether or not it exists
 * elsewhere, so the answer says nothing about other tenants.
 */
export function requireParty(directory: DirectoryRepository) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const partyId = String(req.params['partyId'] ?? '');
    if (!isPartyId(partyId)) {
      next(
        new GatewayError(
          'BAD_REQUEST',
          `"${partyId.slice(0, 64)}" is not a party identifier of the form <scheme>:<number> (e.g. 0106:12345678)`,
        ),
      );
      return;
    }
    const principal = principalOf(res);
    const party = await directory.findParty(partyId);
    if (!party || !canReachParty(principal, party)) {
      next(new GatewayError('PARTY_NOT_ACCESSIBLE', `Party ${partyId} is not accessible with this token`));
      return;
    }
    res.locals['party'] = party;
    next();
  };
}

export function partyOf(res: Response): PartyRecord {
  const party = res.locals['party'] as PartyRecord | undefined;
  if (!party) throw new Error('requireParty middleware missing on this route');
  return party;
}

/** Document ids in paths are UUIDs; anything else cannot exist, so it is a plain 404. */
export function documentIdParam(req: Request): string {
  const id = String(req.params['documentId'] ?? '');
  if (!isUuid(id)) throw new GatewayError('DOCUMENT_NOT_FOUND', `Document ${id.slice(0, 64)} not found`);
  return id.toLowerCase();
}

/** The tenant an environment-level call acts on: the caller's only tenant, or the one chosen with ?tenantId=. */
export function environmentTenant(req: Request, p: Principal): string {
  if (p.grantType === 'password') {
    throw new GatewayError(
      'FORBIDDEN',
      'Environment-level hooks need a client_credentials token; a user token reaches only its linked parties',
    );
  }
  const asked = queryString(req, 'tenantId');
  if (asked !== undefined) {
    if (!p.tenantIds.includes(asked))
      throw new GatewayError('FORBIDDEN', `Tenant ${asked.slice(0, 64)} is not accessible with this token`);
    return asked;
  }
  if (p.tenantIds.length === 1) return p.tenantIds[0] as string;
  if (p.tenantIds.length === 0) throw new GatewayError('FORBIDDEN', 'This token reaches no tenant');
  throw new GatewayError('BAD_REQUEST', 'This token reaches several tenants; choose one with ?tenantId=');
}
