/**
 * Sends the reference tax authority's MLS back over Peppol AS4, as a separate message to the reporter's service
 * provider (MLS_TO of the received SBDH): looked up through the normal SML → SMP path for the MLS document type and
 * process, wrapped in an SBDH and signed and encrypted like every message of the gateway. Each MLS is one AS4 message
 * (stable ids from the report), retried on a short fixed schedule while the peer is unreachable or answers 5xx.
 */
import type { X509Certificate } from 'node:crypto';
import { buildPeppolMessage } from '../peppol/as4/message';
import { stableMessageIds } from '../peppol/as4/message-ids';
import { sendAs4Message, type As4SendOutcome, type SendAs4Options } from '../peppol/as4/sender';
import { formatId, type ParticipantId } from '../peppol/identifiers';
import type { ApKeyRing } from '../peppol/pki/key-ring';
import type { RevocationChecker } from '../peppol/pki/revocation';
import type { RecipientLookup } from '../peppol/recipient-lookup';
import { buildSbd } from '../peppol/sbdh';
import { MLS_DOCUMENT_TYPE, MLS_PROCESS } from '../peppol/smp-publisher';

export interface MlsSenderDeps {
  keys: ApKeyRing;
  apCertificateAuthorities: readonly X509Certificate[];
  lookup: Pick<RecipientLookup, 'findEndpoint'>;
  revocation?: RevocationChecker;
  /** Waits before each retry; default 1 s, 5 s, 30 s (four attempts in all). */
  retryDelaysMs?: readonly number[];
  timeoutMs?: number;
  /** The AS4 exchange (tests may replace it). */
  exchange?: (
    message: ReturnType<typeof buildPeppolMessage>,
    url: string,
    options: SendAs4Options,
  ) => Promise<As4SendOutcome>;
}

export interface MlsToSend {
  /** Seed of the stable AS4 ids (one message per report). */
  key: string;
  xml: string;
  sender: ParticipantId;
  receiver: ParticipantId;
  /** COUNTRY_C1: the authority's country. */
  countryC1: string;
}

export interface MlsSendResult {
  outcome: 'delivered' | 'duplicate' | 'failed';
  attempts: number;
  /** What happened, for the report's list entry. */
  detail: string;
  messageId?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export class MlsSender {
  private stopped = false;

  constructor(private readonly deps: MlsSenderDeps) {}

  stop(): void {
    this.stopped = true;
  }

  async send(mls: MlsToSend): Promise<MlsSendResult> {
    const delays = this.deps.retryDelaysMs ?? [1000, 5000, 30_000];
    const to = formatId(mls.receiver);
    let detail = '';
    for (let attempt = 0; attempt <= delays.length; attempt++) {
      if (attempt > 0) await sleep(delays[attempt - 1]!);
      if (this.stopped) return { outcome: 'failed', attempts: attempt, detail: `stopped; last: ${detail}` };
      const once = await this.attempt(mls, attempt);
      detail = `${to}: ${once.detail}`;
      if (once.final) return { outcome: once.outcome, attempts: attempt + 1, detail, ...once.ids };
    }
    return { outcome: 'failed', attempts: delays.length + 1, detail };
  }

  private async attempt(
    mls: MlsToSend,
    attempt: number,
  ): Promise<{ final: boolean; outcome: MlsSendResult['outcome']; detail: string; ids?: { messageId: string } }> {
    const found = await this.deps.lookup.findEndpoint(mls.receiver, [MLS_DOCUMENT_TYPE], MLS_PROCESS);
    if (!found.ok) {
      const retry = found.failure === 'smp-unreachable';
      return { final: !retry, outcome: 'failed', detail: `lookup ${found.failure}: ${found.message}`.slice(0, 500) };
    }
    const endpoint = found.result.endpoint;
    const ids = stableMessageIds(`taxsim:mls:${mls.key}`);
    const header = {
      sender: mls.sender,
      receiver: mls.receiver,
      documentType: MLS_DOCUMENT_TYPE,
      process: MLS_PROCESS,
    };
    const sbd = buildSbd({
      ...header,
      countryC1: mls.countryC1,
      instanceIdentifier: ids.conversationId,
      payload: { xml: mls.xml },
    });
    const receiverCertificate = endpoint.certificate;
    const message = buildPeppolMessage({
      sbd: sbd.xml,
      header,
      signer: this.deps.keys.signing(),
      receiverCertificate,
      ...ids,
    });
    const exchange = this.deps.exchange ?? sendAs4Message;
    const out = await exchange(message, endpoint.url, {
      apCertificateAuthorities: this.deps.apCertificateAuthorities,
      receiverCertificate,
      timeoutMs: this.deps.timeoutMs ?? 30_000,
      ...(this.deps.revocation ? { revocation: this.deps.revocation } : {}),
    });
    const status = out.httpStatus !== undefined ? `HTTP ${out.httpStatus}` : 'no HTTP answer';
    const reason = 'reason' in out ? `: ${out.reason}` : '';
    const detail = `attempt ${attempt + 1} to ${endpoint.url} (AS4 MessageId ${message.messageId}): ${out.outcome}, ${status}${reason}`;
    if (out.outcome === 'retryable') return { final: false, outcome: 'failed', detail: detail.slice(0, 1000) };
    return { final: true, outcome: out.outcome, detail: detail.slice(0, 1000), ids: { messageId: message.messageId } };
  }
}
