/**
 * The OpenPeppol eDEC code lists (participant identifier schemes, document types, processes, transport profiles) as
 * versioned data with their removal dates, enforced by date: from its removal date on, a scheme or a document type is
 * refused where we send and in our SMP; the day before it is still accepted. A deprecated entry that is not removed
 * yet is allowed (the check says so, for a warning).
 *
 * The data is the pinned peppol-id jar's code lists (codelists.json, made by `npm run rules:fetch`), with our own
 * later changes of codelist-changes.ts over it.
 */
import { z } from 'zod';
import { GatewayError } from '../../core/gateway-error';
import { formatId, icdOf, PARTICIPANT_SCHEME, type DocumentTypeId, type ParticipantId } from '../identifiers';
import { CODE_LIST_CHANGES, type CodeListChange } from './codelist-changes';
import { networkDataLocation, readCodeListsFile } from './network-data';

const State = z.enum(['active', 'deprecated', 'removed']);
const Common = {
  state: State,
  initialRelease: z.string().optional(),
  deprecationRelease: z.string().optional(),
  removalDate: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
};
const List = <T extends z.ZodTypeAny>(entry: T) =>
  z.object({ file: z.string(), version: z.string(), entries: z.array(entry).min(1) });
const CodeListsFile = z.object({
  source: z.string(),
  lists: z.object({
    participantSchemes: List(
      z.object({ icd: z.string().regex(/^\d{4}$/), schemeId: z.string(), country: z.string().optional(), ...Common }),
    ),
    documentTypes: List(
      z.object({
        name: z.string().optional(),
        scheme: z.string(),
        value: z.string(),
        ...Common,
        processes: z.array(z.object({ scheme: z.string(), value: z.string() })),
      }),
    ),
    processes: List(z.object({ scheme: z.string(), value: z.string(), ...Common })),
    transportProfiles: List(z.object({ id: z.string(), ...Common })),
  }),
});
export type CodeListsData = z.infer<typeof CodeListsFile>;

export type EntryState = z.infer<typeof State>;

/** One entry's standing on a day. */
export interface CodeListVerdict {
  /** `participant identifier scheme 0193 (UBLBE)`, `document type XRechnung UBL Invoice V2.0 (busdox-docid-qns::…)`. */
  entry: string;
  /** `removed` from the removal date on (or when the list says removed), else the list's state. */
  state: EntryState | 'unknown';
  removalDate?: string;
  /** The code list and its version, e.g. `Peppol Code Lists - Participant identifier schemes v9.5`. */
  list: string;
  /** Our change over the pinned list that gave the removal date, when one did. */
  source?: string;
}

/** The day (UTC) of an instant, `YYYY-MM-DD`: removal dates are days, and apply from 00:00 UTC. */
function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function listName(l: { file: string }): string {
  return l.file.replace(/\.xml$/, '');
}

export class CodeLists {
  private readonly schemes: Map<string, CodeListsData['lists']['participantSchemes']['entries'][number]>;
  private readonly documentTypes: Map<string, CodeListsData['lists']['documentTypes']['entries'][number]>;
  private readonly changes: Map<string, CodeListChange>;

  constructor(
    readonly data: CodeListsData,
    changes: readonly CodeListChange[] = CODE_LIST_CHANGES,
  ) {
    this.schemes = new Map(data.lists.participantSchemes.entries.map((e) => [e.icd, e]));
    this.documentTypes = new Map(data.lists.documentTypes.entries.map((e) => [`${e.scheme}::${e.value}`, e]));
    this.changes = new Map(changes.map((c) => [`${c.list}|${c.key}`, c]));
  }

  /** The versions of the lists, e.g. `{ participantSchemes: '9.5', … }`. */
  versions(): Record<keyof CodeListsData['lists'], string> {
    const l = this.data.lists;
    return {
      participantSchemes: l.participantSchemes.version,
      documentTypes: l.documentTypes.version,
      processes: l.processes.version,
      transportProfiles: l.transportProfiles.version,
    };
  }

  private verdict(
    list: { file: string },
    entry: string,
    found: { state: EntryState; removalDate?: string | undefined } | undefined,
    change: CodeListChange | undefined,
    at: Date,
  ): CodeListVerdict {
    const base = { entry, list: listName(list) };
    if (!found) return { ...base, state: 'unknown' };
    const removalDate = change?.removalDate ?? found.removalDate;
    const removed = found.state === 'removed' || (removalDate !== undefined && dayOf(at) >= removalDate);
    return {
      ...base,
      state: removed ? 'removed' : found.state === 'removed' ? 'deprecated' : found.state,
      ...(removalDate ? { removalDate } : {}),
      ...(change ? { source: change.source } : {}),
    };
  }

  /** The standing of a participant's scheme (its ICD) at `at`; `unknown` for an ICD the list does not have. */
  participantScheme(p: ParticipantId, at: Date): CodeListVerdict {
    const icd = icdOf(p);
    const found = this.schemes.get(icd);
    return this.verdict(
      this.data.lists.participantSchemes,
      `participant identifier scheme ${icd}${found ? ` (${found.schemeId})` : ''}`,
      found,
      this.changes.get(`participantSchemes|${icd}`),
      at,
    );
  }

  /** The standing of a document type at `at`; `unknown` for one the list does not have (allowed: see below). */
  documentType(d: DocumentTypeId, at: Date): CodeListVerdict {
    const key = formatId(d);
    const found = this.documentTypes.get(key);
    return this.verdict(
      this.data.lists.documentTypes,
      `document type ${found?.name ? `${found.name} (${key})` : key}`,
      found,
      this.changes.get(`documentTypes|${key}`),
      at,
    );
  }
}

/** The sentence a refusal says: the entry, its list and the date it was removed on. */
export function removedMessage(v: CodeListVerdict): string {
  return (
    `the ${v.entry} is removed from the ${v.list}` +
    (v.removalDate ? ` as of ${v.removalDate}` : '') +
    (v.source ? ` (${v.source})` : '')
  );
}

/**
 * What the network rules refuse of a participant we register or send to, or undefined: a removed scheme from its
 * removal date on, and (for `iso6523-actorid-upis`) an ICD the list does not have.
 */
export function participantRefusal(lists: CodeLists, p: ParticipantId, at: Date): CodeListVerdict | undefined {
  if (p.scheme !== PARTICIPANT_SCHEME) return undefined;
  const v = lists.participantScheme(p, at);
  return v.state === 'removed' || v.state === 'unknown' ? v : undefined;
}

/**
 * What the network rules refuse of a document type we send or publish, or undefined: a removed one from its removal
 * date on. A document type the list does not have is not refused (the list holds the document types OpenPeppol
 * registers; others, e.g. a community's, travel too).
 */
export function documentTypeRefusal(lists: CodeLists, d: DocumentTypeId, at: Date): CodeListVerdict | undefined {
  const v = lists.documentType(d, at);
  return v.state === 'removed' ? v : undefined;
}

/** Throws a 400 naming the entry and its removal date, as `participantRefusal` / `documentTypeRefusal` find. */
export function assertInForce(
  lists: CodeLists,
  at: Date,
  ids: { participant?: ParticipantId; documentTypes?: readonly DocumentTypeId[] },
): void {
  const refusals: CodeListVerdict[] = [];
  if (ids.participant) {
    const r = participantRefusal(lists, ids.participant, at);
    if (r) refusals.push(r);
  }
  for (const d of ids.documentTypes ?? []) {
    const r = documentTypeRefusal(lists, d, at);
    if (r) refusals.push(r);
  }
  if (refusals.length === 0) return;
  const what = refusals.map((r) =>
    r.state === 'unknown' ? `the ${r.entry} is not in the ${r.list}` : removedMessage(r),
  );
  throw new GatewayError('BAD_REQUEST', `Refused by the Peppol code lists: ${what.join('; ')}`, {
    details: {
      codeLists: refusals.map((r) => ({
        entry: r.entry,
        list: r.list,
        state: r.state,
        ...(r.removalDate ? { removalDate: r.removalDate } : {}),
      })),
    },
  });
}

export function parseCodeLists(json: unknown): CodeLists {
  const parsed = CodeListsFile.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`the Peppol code lists file is not what the fetch writes: ${issues.join('; ')}`);
  }
  return new CodeLists(parsed.data);
}

const loaded = new Map<string, CodeLists>();

/** The code lists of the rules cache `rulesDir` (config validation.rulesDir), read once per process. */
export function loadCodeLists(rulesDir: string): CodeLists {
  let lists = loaded.get(rulesDir);
  if (!lists) {
    lists = parseCodeLists(readCodeListsFile(networkDataLocation(rulesDir)));
    loaded.set(rulesDir, lists);
  }
  return lists;
}
