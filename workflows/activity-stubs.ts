import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

/**
 * Activity proxies grouped by timeout/retry profile, in one place. Document steps are short and idempotent; they
 * retry on infrastructure failures (database, blob store) and fail fast on non-retryable GatewayErrors.
 */
export const documentSteps = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Activities heartbeat while they stream a document, so a crashed worker's attempt is retried within seconds.
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * Validation runs the official artefacts (SaxonJS, xmllint) on the whole document: minutes for the largest invoices,
 * so a longer start-to-close. A fault of the installation (a rule pack missing or corrupt, xmllint absent:
 * DEPENDENCY_UNAVAILABLE) is never the document's: the step retries every 5 minutes for as long as it lasts, the
 * document waits, and it proceeds once an operator has fixed the installation (the self-check names what).
 */
export const validationSteps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  // No maximumAttempts: unlimited.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Deliveries. Peppol: a lookup (DNS + SMP requests, each bounded by PEPPOL_LOOKUP_TIMEOUT_MS) or one AS4 exchange (to
 * 120 s). Heartbeats every 5 s while waiting on the peer. Retries here are for our own infrastructure (database, blob
 * store, a crashed worker); the peer's answers are results and follow the delivery schedule in the workflow. A
 * retried send is the same AS4 message (stable ids), so the receiver sees a duplicate, never a second invoice.
 * E-mail: the PDF is made and the mail handed to the SMTP relay in one attempt (a 10 MB attachment takes seconds).
 */
export const deliverySteps = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 10 },
});
