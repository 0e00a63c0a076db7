import { readFileSync } from 'node:fs';
import path from 'node:path';
import { requiredSearchAttributes } from '../../../src/main/search-attributes';
import { missingSearchAttributes } from '../../../src/temporal/search-attributes';

const ROOT = path.resolve(__dirname, '../../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { SEARCH_ATTRIBUTES } = require('../../../scripts/lib/services') as { SEARCH_ATTRIBUTES: string[] };

/** `Name=Type` as the temporal CLI spells types (KEYWORD → Keyword, DATETIME → Datetime). */
const spelled = (k: { name: string; type: string }) => `${k.name}=${k.type.charAt(0)}${k.type.slice(1).toLowerCase()}`;

describe('the search attributes a worker needs registered', () => {
  const lister = (custom: Record<string, string>) => ({
    operatorService: { listSearchAttributes: () => Promise.resolve({ customAttributes: custom }) },
  });

  it('names each one the namespace lacks, with its type; none when all are there', async () => {
    const required = requiredSearchAttributes(true);
    expect(required.map((k) => k.name)).toEqual([
      'TenantId',
      'DocumentId',
      'PartyId',
      'DocumentKind',
      'DocumentState',
      'Outcome',
      'Channel',
      'Attempt',
      'NextAttemptOn',
      'HookId',
      'EventTopic',
      'DeliveryAttempt',
    ]);
    expect(
      await missingSearchAttributes(lister({ TenantId: 'Keyword', DocumentId: 'Keyword' }), 'ns', required),
    ).toEqual([
      'PartyId (KEYWORD)',
      'DocumentKind (KEYWORD)',
      'DocumentState (KEYWORD)',
      'Outcome (KEYWORD)',
      'Channel (KEYWORD)',
      'Attempt (INT)',
      'NextAttemptOn (DATETIME)',
      'HookId (KEYWORD)',
      'EventTopic (KEYWORD)',
      'DeliveryAttempt (INT)',
    ]);
    const all = Object.fromEntries(required.map((k) => [k.name, 'x']));
    expect(await missingSearchAttributes(lister(all), 'ns', required)).toEqual([]);
    // Without tagged deliveries, only the document runs' attributes count.
    expect(requiredSearchAttributes(false).map((k) => k.name)).toEqual(required.slice(0, 9).map((k) => k.name));
  });

  it('stay within SQL visibility limits per namespace: 10 Keyword, 3 Int, 3 Datetime', () => {
    const count = (type: string) => requiredSearchAttributes(true).filter((k) => k.type === type).length;
    expect(count('KEYWORD')).toBeLessThanOrEqual(10);
    expect(count('INT')).toBeLessThanOrEqual(3);
    expect(count('DATETIME')).toBeLessThanOrEqual(3);
  });

  it('are the ones the local services, the compose stack and docs/operations.md register', () => {
    const required = requiredSearchAttributes(true).map(spelled).sort();
    expect([...SEARCH_ATTRIBUTES].sort()).toEqual(required);

    // docker-compose.temporal.yml: `for sa in A B; do … --type T` loops and single `--name X --type T` commands.
    const compose = readFileSync(path.join(ROOT, 'docker-compose.temporal.yml'), 'utf8');
    const registered: string[] = [];
    for (const m of compose.matchAll(
      /for sa in ([\w ]+); do\s+temporal operator search-attribute create .*--type (\w+)/g,
    ))
      for (const name of m[1]!.trim().split(/\s+/)) registered.push(`${name}=${m[2]}`);
    for (const m of compose.matchAll(/search-attribute create -n \S+ --name (\w+) --type (\w+)/g))
      registered.push(`${m[1]}=${m[2]}`);
    expect(registered.sort()).toEqual(required);

    // docs/operations.md: the `temporal operator search-attribute create` commands for a cluster.
    const docs = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const documented = [...docs.matchAll(/search-attribute create --namespace \S+ --name (\w+) --type (\w+)/g)].map(
      (m) => `${m[1]}=${m[2]}`,
    );
    expect(documented.sort()).toEqual(required);
  });
});
