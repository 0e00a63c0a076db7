/**
 * The worker's memory of recipient lookups: a found endpoint (SML → SMP → checked endpoint) is kept per participant,
 * document types and process, so a run of invoices to one recipient asks the SML and its SMP once, not once per
 * document. An answer is kept for at most the configured time, and never past what it rests on: the endpoint's
 * ServiceExpirationDate, the endpoint certificate's and the SMP signer's expiry. Only found endpoints are kept (a
 * refusal is asked again next time, so a recipient that registers is found at once). A failed delivery to a
 * participant forgets its answers (`forget`): its endpoint may have moved. Bounded: past `maxEntries` the least
 * recently used answer goes. Per process; another worker keeps its own.
 */
import { formatId, type DocumentTypeId, type ParticipantId, type ProcessId } from './identifiers';
import type { LookupRefusal, RecipientEndpoint, RecipientLookup } from './recipient-lookup';

export interface LookupCacheOptions {
  /** Longest time an answer is kept (ms); 0 keeps none. */
  ttlMs: number;
  /** Answers kept at most; the least recently used goes first. Default 2,000. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  answer: RecipientEndpoint;
  expiresAt: number;
}

type Lookup = Pick<RecipientLookup, 'findEndpoint'>;

/** Until when `answer` may be used: the TTL, the endpoint's expiration date and both certificates' expiry. */
export function validUntil(answer: RecipientEndpoint, now: number, ttlMs: number): number {
  const { endpoint, metadata } = answer.result;
  const limits = [
    now + ttlMs,
    endpoint.serviceExpirationDate?.getTime(),
    Date.parse(endpoint.certificate.validTo),
    Date.parse(metadata.signer.validTo),
  ].filter((t): t is number => t !== undefined && Number.isFinite(t));
  return Math.min(...limits);
}

export class CachedRecipientLookup implements Lookup {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly lookup: Lookup,
    private readonly options: LookupCacheOptions,
  ) {
    this.maxEntries = options.maxEntries ?? 2000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  async findEndpoint(
    id: string | ParticipantId,
    documentTypes: readonly DocumentTypeId[],
    process?: ProcessId,
  ): Promise<RecipientEndpoint | LookupRefusal> {
    if (this.options.ttlMs <= 0 || typeof id === 'string') return this.lookup.findEndpoint(id, documentTypes, process);
    const key = cacheKey(id, documentTypes, process);
    const kept = this.entries.get(key);
    const now = this.now();
    if (kept) {
      this.entries.delete(key);
      if (kept.expiresAt > now) {
        // Most recently used last: the Map's order is the eviction order.
        this.entries.set(key, kept);
        return kept.answer;
      }
    }
    const answer = await this.lookup.findEndpoint(id, documentTypes, process);
    if (!answer.ok) return answer;
    const expiresAt = validUntil(answer, this.now(), this.options.ttlMs);
    if (expiresAt <= this.now()) return answer;
    this.entries.set(key, { answer, expiresAt });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return answer;
  }

  /** Forgets every answer about `participant` (a delivery to it failed: its endpoint may have changed). */
  forget(participant: ParticipantId): void {
    const prefix = `${formatId(participant)}\n`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

/** Participant, document types in order, process: as the lookup was asked. */
function cacheKey(participant: ParticipantId, types: readonly DocumentTypeId[], process: ProcessId | undefined) {
  return [formatId(participant), types.map((t) => formatId(t)).join('\t'), process ? formatId(process) : ''].join('\n');
}
