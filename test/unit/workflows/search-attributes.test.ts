import { requiredSearchAttributes } from '../../../src/main/search-attributes';
import { missingSearchAttributes } from '../../../src/temporal/search-attributes';

describe('the search attributes a worker needs registered', () => {
  const lister = (custom: Record<string, string>) => ({
    operatorService: { listSearchAttributes: () => Promise.resolve({ customAttributes: custom }) },
  });

  it('names each one the namespace lacks, with its type; none when all are there', async () => {
    const required = requiredSearchAttributes(true);
    expect(required.map((k) => k.name)).toEqual([
      'TenantId',
      'DocumentId',
      'NextAttemptOn',
      'HookId',
      'EventTopic',
      'PartyId',
      'DeliveryAttempt',
    ]);
    expect(
      await missingSearchAttributes(lister({ TenantId: 'Keyword', DocumentId: 'Keyword' }), 'ns', required),
    ).toEqual([
      'NextAttemptOn (DATETIME)',
      'HookId (KEYWORD)',
      'EventTopic (KEYWORD)',
      'PartyId (KEYWORD)',
      'DeliveryAttempt (INT)',
    ]);
    const all = Object.fromEntries(required.map((k) => [k.name, 'x']));
    expect(await missingSearchAttributes(lister(all), 'ns', required)).toEqual([]);
    // Without tagged deliveries, only the document runs' attributes count.
    expect(requiredSearchAttributes(false).map((k) => k.name)).toEqual(['TenantId', 'DocumentId', 'NextAttemptOn']);
  });
});
