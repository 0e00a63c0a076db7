import type { Request, Response, Router } from 'express';
import { principalOf } from '../../src/auth/authenticate';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import { canReachParty } from '../access';

/** GET /api/v1/me: who the token is, and which parties it reaches (decisions.md). */
export function registerMeRoutes(router: Router, deps: { directory: DirectoryRepository }): void {
  router.get('/api/v1/me', async (_req: Request, res: Response) => {
    const p = principalOf(res);
    const parties = (await deps.directory.listParties(p.tenantIds)).filter((party) => canReachParty(p, party));
    res.json({
      clientId: p.clientId,
      ...(p.username ? { username: p.username } : {}),
      tenantId: p.tenantIds[0] ?? null,
      tenantIds: p.tenantIds,
      grantType: p.grantType,
      scope: p.scope.join(' '),
      parties: parties.map((x) => ({ partyId: x.partyId, legalEntityId: x.legalEntityId, name: x.name })),
    });
  });
}
