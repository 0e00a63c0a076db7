import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { SendRunStatus } from '../src/maintenance/reconcile';
import { GatewayError } from '../src/core/gateway-error';
import type { RetrySchedule } from '../src/core/retry-schedule';
import { receiveDocumentWorkflowId, sendInvoiceWorkflowId } from '../src/core/identifiers';
import { connectTemporalClient, type TemporalClient } from '../src/temporal/client';
import { RECEIVE_DOCUMENT_WORKFLOW, type ReceiveDocumentInput } from '../workflows/contracts/receive-document';
import { DocumentKind, startSearchAttributes } from '../workflows/contracts/search-attributes';
import { DocumentState } from '../src/core/document-states';
import { SEND_INVOICE_WORKFLOW, type SendInvoiceInput } from '../workflows/contracts/send-invoice';
import type { receiveDocument } from '../workflows/receive-document.workflow';
import { SEND_MLS_WORKFLOW, sendMlsWorkflowId, type SendMlsInput } from '../workflows/contracts/send-mls';
import {
  SEND_INVOICE_RESPONSE_WORKFLOW,
  sendInvoiceResponseWorkflowId,
  type SendInvoiceResponseInput,
} from '../workflows/contracts/send-invoice-response';
import type { sendInvoice } from '../workflows/send-invoice.workflow';
import { SEND_ORDER_WORKFLOW, sendOrderWorkflowId, type SendOrderInput } from '../workflows/contracts/send-order';
import {
  SEND_ORDER_RESPONSE_WORKFLOW,
  sendOrderResponseWorkflowId,
  type SendOrderResponseInput,
} from '../workflows/contracts/send-order-response';
import { RETRY_NOW_SIGNAL } from '../workflows/contracts/send-invoice';
import { REPORT_TAX_WORKFLOW, reportTaxWorkflowId, type ReportTaxInput } from '../workflows/contracts/report-tax';

/** What the HTTP edge needs from Temporal; a port so HTTP tests can run without a server. */
export interface WorkflowStarter {
  /** Idempotent: a second start for the same document is a success ('already-started'). */
  startSendInvoice(input: SendInvoiceInput): Promise<'started' | 'already-started'>;
  /**
   * A new run for a document whose run ended (resend of a document in InvoiceSentError; `input.generation` set):
   * 'running' when a run of the document is still open. Optional for test starters.
   */
  resendInvoice?(input: SendInvoiceInput): Promise<'started' | 'running'>;
  /** Wakes a run waiting between attempts; 'not-running' when the document has no open run. Optional for tests. */
  retryNow?(tenantId: string, documentId: string): Promise<'signalled' | 'not-running'>;
  /** The receive workflow of a stored AS4 message; idempotent like startSendInvoice. Optional for test starters. */
  startReceiveDocument?(input: ReceiveDocumentInput): Promise<'started' | 'already-started'>;
  /** The MLS run of a received document; 'already-started' when it has one (one MLS per document). Optional. */
  startSendMls?(input: SendMlsInput): Promise<'started' | 'already-started'>;
  /** The run that sends a buyer's Invoice Response; REJECT_DUPLICATE: one per (invoice, status), ever. */
  startSendInvoiceResponse?(input: SendInvoiceResponseInput): Promise<'started' | 'already-started'>;
  /**
   * A document's tax report after its first (`input.report`: its number and type); REJECT_DUPLICATE: one run per
   * report number, ever ('already-started' when that number ran). Optional for test starters.
   */
  startTaxReport?(input: ReportTaxInput): Promise<'started' | 'already-started'>;
  /** The run that checks and sends an uploaded purchase order; REJECT_DUPLICATE: one per document. */
  startSendOrder?(input: SendOrderInput): Promise<'started' | 'already-started'>;
  /** The run that sends a seller's Order Response; REJECT_DUPLICATE: one per (order, response code), ever. */
  startSendOrderResponse?(input: SendOrderResponseInput): Promise<'started' | 'already-started'>;
  ping(): Promise<boolean>;
}

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /**
   * Start runs with the gateway's search attributes, which the runs then keep current (they must be registered on the
   * server: workflows/contracts/search-attributes.ts). False: runs without any (a server that lacks them).
   */
  searchAttributes?: boolean;
  /** Peppol delivery retry schedule put into each sendInvoice run's input (PEPPOL_SEND_RETRY_SCHEDULE). */
  peppolSendSchedule?: RetrySchedule;
  /** EMAIL_SEND_RETRY_SCHEDULE, fixed into each run at start. */
  emailSendSchedule?: RetrySchedule;
}

/** The document runs' side of the process's Temporal client (src/temporal/client.ts). */
export class TemporalWorkflowStarter implements WorkflowStarter {
  private constructor(
    private readonly temporal: TemporalClient,
    private readonly settings: TemporalSettings,
    private readonly ownsClient: boolean,
  ) {}

  /** A starter on the process's client, shared with the other parts of the process (which close it). */
  static over(temporal: TemporalClient, settings: TemporalSettings): TemporalWorkflowStarter {
    return new TemporalWorkflowStarter(temporal, settings, false);
  }

  /** A starter with a connection of its own, closed by close() (a tool or test that only starts documents). */
  static async connect(settings: TemporalSettings): Promise<TemporalWorkflowStarter> {
    return new TemporalWorkflowStarter(await connectTemporalClient(settings), settings, true);
  }

  /** A start's search attributes, unless they are switched off. */
  private search(doc: Parameters<typeof startSearchAttributes>[0]) {
    return this.settings.searchAttributes === false ? {} : { typedSearchAttributes: startSearchAttributes(doc) };
  }

  private get client() {
    return this.temporal.client;
  }

  async startSendInvoice(input: SendInvoiceInput): Promise<'started' | 'already-started'> {
    const started = await this.startSendRun(input, 'REJECT_DUPLICATE');
    return started === 'started' ? 'started' : 'already-started';
  }

  async resendInvoice(input: SendInvoiceInput): Promise<'started' | 'running'> {
    // The workflow id stays the document's business key; a closed run may be followed by the resend's.
    return this.startSendRun(input, 'ALLOW_DUPLICATE');
  }

  private async startSendRun(
    input: SendInvoiceInput,
    reuse: 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE',
  ): Promise<'started' | 'running'> {
    const workflowId = sendInvoiceWorkflowId(input.tenantId, input.documentId);
    try {
      await this.client.workflow.start<typeof sendInvoice>(SEND_INVOICE_WORKFLOW, {
        taskQueue: this.settings.taskQueue,
        workflowId,
        args: [
          {
            ...input,
            ...(this.settings.peppolSendSchedule ? { peppolSchedule: this.settings.peppolSendSchedule } : {}),
            ...(this.settings.emailSendSchedule ? { emailSchedule: this.settings.emailSendSchedule } : {}),
          },
        ],
        // A document id is used once, ever: a finished run is only followed by an explicit resend.
        workflowIdReusePolicy: reuse,
        ...this.search({
          tenantId: input.tenantId,
          documentId: input.documentId,
          state: input.generation ? DocumentState.Resending : DocumentState.Accepted,
        }),
      });
      return 'started';
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) return 'running';
      throw new GatewayError(
        'WORKFLOW_START_FAILED',
        input.generation
          ? 'The resend could not be started; repeat the request'
          : 'The document was stored but processing could not be started; retry with the same X-Service-DocumentId',
        { cause: e },
      );
    }
  }

  async startReceiveDocument(input: ReceiveDocumentInput): Promise<'started' | 'already-started'> {
    try {
      await this.client.workflow.start<typeof receiveDocument>(RECEIVE_DOCUMENT_WORKFLOW, {
        taskQueue: this.settings.taskQueue,
        workflowId: receiveDocumentWorkflowId(input.tenantId, input.messageId),
        // The schedule of the document's automatic MLS, if the run sends one.
        args: [
          this.settings.peppolSendSchedule && !input.peppolSchedule
            ? { ...input, peppolSchedule: this.settings.peppolSendSchedule }
            : input,
        ],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // Its document (and kind) is known once the message is read: the run adds them.
        ...this.search({ tenantId: input.tenantId, state: DocumentState.Received }),
      });
      return 'started';
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) return 'already-started';
      throw new GatewayError(
        'WORKFLOW_START_FAILED',
        'The received message was stored but its processing could not be started',
        { cause: e },
      );
    }
  }

  /** The run that sends the MLS of a received document; REJECT_DUPLICATE: one MLS per document, ever. */
  startSendMls(input: SendMlsInput): Promise<'started' | 'already-started'> {
    return this.startOnce(
      SEND_MLS_WORKFLOW,
      sendMlsWorkflowId(input.tenantId, input.documentId),
      input,
      DocumentKind.Mls,
      'The message-level status could not be started',
    );
  }

  startSendInvoiceResponse(input: SendInvoiceResponseInput): Promise<'started' | 'already-started'> {
    return this.startOnce(
      SEND_INVOICE_RESPONSE_WORKFLOW,
      sendInvoiceResponseWorkflowId(input.tenantId, input.documentId, input.statusCode),
      input,
      DocumentKind.InvoiceResponse,
      'The Invoice Response could not be started',
    );
  }

  startTaxReport(input: ReportTaxInput): Promise<'started' | 'already-started'> {
    return this.startOnce(
      REPORT_TAX_WORKFLOW,
      reportTaxWorkflowId(input.tenantId, input.documentId, input.report?.sequence),
      input,
      DocumentKind.TaxReport,
      'The tax report could not be started; repeat the request',
    );
  }

  startSendOrder(input: SendOrderInput): Promise<'started' | 'already-started'> {
    return this.startOnce(
      SEND_ORDER_WORKFLOW,
      sendOrderWorkflowId(input.tenantId, input.documentId),
      input,
      DocumentKind.Order,
      'The order was stored but its sending could not be started; retry with the same X-Service-DocumentId',
    );
  }

  startSendOrderResponse(input: SendOrderResponseInput): Promise<'started' | 'already-started'> {
    return this.startOnce(
      SEND_ORDER_RESPONSE_WORKFLOW,
      sendOrderResponseWorkflowId(input.tenantId, input.documentId, input.responseCode),
      input,
      DocumentKind.OrderResponse,
      'The Order Response could not be started',
    );
  }

  /**
   * A Peppol sending run of one document (MLS, Invoice Response, order, Order Response): REJECT_DUPLICATE, so a
   * business key runs once, ever ('already-started' otherwise); the configured Peppol schedule fixed into its input;
   * tenant, document and kind as search attributes.
   */
  private async startOnce(
    workflowType: string,
    workflowId: string,
    input: { tenantId: string; documentId: string; peppolSchedule?: RetrySchedule },
    kind: string,
    failure: string,
  ): Promise<'started' | 'already-started'> {
    try {
      await this.client.workflow.start(workflowType, {
        taskQueue: this.settings.taskQueue,
        workflowId,
        args: [
          this.settings.peppolSendSchedule && !input.peppolSchedule
            ? { ...input, peppolSchedule: this.settings.peppolSendSchedule }
            : input,
        ],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        ...this.search({ tenantId: input.tenantId, documentId: input.documentId, kind }),
      });
      return 'started';
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) return 'already-started';
      throw new GatewayError('WORKFLOW_START_FAILED', failure, { cause: e });
    }
  }

  async retryNow(tenantId: string, documentId: string): Promise<'signalled' | 'not-running'> {
    const handle = this.client.workflow.getHandle<typeof sendInvoice>(sendInvoiceWorkflowId(tenantId, documentId));
    try {
      await handle.signal(RETRY_NOW_SIGNAL);
      return 'signalled';
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return 'not-running';
      throw e;
    }
  }

  /** Where a sales invoice's run stands, with the state its result names once completed (reconciliation). */
  async describeSendInvoice(tenantId: string, documentId: string): Promise<SendRunStatus> {
    const handle = this.client.workflow.getHandle<typeof sendInvoice>(sendInvoiceWorkflowId(tenantId, documentId));
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return { status: 'not-found' };
      throw e;
    }
    switch (status) {
      case 'RUNNING':
      case 'CONTINUED_AS_NEW':
        return { status: 'running' };
      case 'COMPLETED':
        return { status: 'completed', state: (await handle.result()).state };
      case 'TERMINATED':
        return { status: 'terminated' };
      case 'CANCELLED':
        return { status: 'canceled' };
      case 'TIMED_OUT':
        return { status: 'timed-out' };
      default:
        return { status: 'failed' };
    }
  }

  ping(): Promise<boolean> {
    return this.temporal.ping();
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.temporal.close();
  }
}
