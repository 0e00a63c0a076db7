import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Every place the code updates a stored document, with who may run it at the same time. The embedded database makes
 * no update atomic and no conditional update a compare-and-set (docs/decisions.md, "Storage writes"), so an update is
 * only safe where one writer owns the document, or under a numbered lease (src/storage/lease.ts, never updated).
 * A new update call fails this test until it is listed here with its reason.
 */
const INVENTORY: Record<string, { calls: number; writers: string }> = {
  'src/storage/as4/as4-inbound.repository.ts': {
    calls: 1,
    writers: 'recordState: only the receive workflow of the message, writing the same three fields on every retry',
  },
  'src/storage/directory.repository.ts': {
    calls: 2,
    writers: 'client and user changes (admin CLI), each read-change-write under the lease client:<id> / user:<id>',
  },
  'src/storage/events/event.repository.ts': {
    calls: 1,
    writers: 'the delivery log record of one attempt, replaced only by a retry of that attempt (same content)',
  },
  'src/storage/hooks/hook.repository.ts': {
    calls: 4,
    writers:
      'hook changes (API, admin CLI), delivery authentication (admin CLI), disabling (worker) and secret rotation (admin CLI), each under the hook write lease of its rev',
  },
  'src/storage/peppol/peppol-directory.repository.ts': {
    calls: 3,
    writers: 'participant configuration, SML state and tenant defaults (API), each under its lease',
  },
};

const UPDATE = /\.(updateOne|updateMany|findOneAndUpdate|findByIdAndUpdate|replaceOne|findOneAndReplace|bulkWrite)\(/g;
const ROOT = path.resolve(__dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return sources(rel);
    return rel.endsWith('.ts') ? [rel.split(path.sep).join('/')] : [];
  });
}

describe('updates of stored documents', () => {
  it('happen only where the inventory names their single writer or lease', () => {
    const found: Record<string, number> = {};
    for (const file of ['src', 'api', 'activities', 'workflows'].flatMap(sources)) {
      const n = (readFileSync(path.join(ROOT, file), 'utf8').match(UPDATE) ?? []).length;
      if (n > 0) found[file] = n;
    }
    expect(found).toEqual(Object.fromEntries(Object.entries(INVENTORY).map(([f, e]) => [f, e.calls])));
  });
});
