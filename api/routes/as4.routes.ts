import type { Request, Response, Router } from 'express';
import { isGatewayError } from '../../src/core/gateway-error';
import { EbmsError } from '../../src/peppol/as4/ebms-error';
import type { As4Answer, As4Receiver } from '../../src/peppol/as4/receiver';
import type { Logger } from '../../src/observability/logger';
import { requestIdOf } from '../problem-details';
import { readBody } from '../read-body';

export interface As4RouteDeps {
  /** Undefined when no AP key is configured: the endpoint then answers 503. */
  receiver: As4Receiver | undefined;
  maxMessageBytes: number;
  logger: Logger;
}

/**
 * POST /as4: the Peppol AS4 receiving endpoint. Not under /api and without bearer authentication: the message
 * signature (checked against the Peppol AP CA) is the authentication. Answers are SOAP signals: the signed receipt, or
 * a signed ebMS error (HTTP 200 as phase4 answers; 413 for an oversize body, 503 when the message could not be stored).
 */
export function registerAs4Routes(router: Router, deps: As4RouteDeps): void {
  router.post('/as4', async (req: Request, res: Response) => {
    const receiver = deps.receiver;
    if (!receiver) {
      res.status(503).type('text/plain').send('AS4 receiving is not configured on this gateway (no Peppol AP key)');
      return;
    }
    const send = (a: As4Answer): void => {
      if (a.internalError !== undefined)
        deps.logger.error(
          { requestId: requestIdOf(req), as4MessageId: a.messageId, err: a.internalError },
          'AS4 message could not be stored',
        );
      deps.logger.info(
        {
          requestId: requestIdOf(req),
          as4MessageId: a.messageId,
          outcome: a.outcome,
          ebmsCode: a.ebmsCode,
          reason: a.description,
          status: a.status,
        },
        a.outcome === 'refused' ? 'AS4 message refused' : 'AS4 message received',
      );
      res.status(a.status).type(a.contentType).send(a.body);
    };
    const tooLarge = (): void => {
      // The sender may still be sending: close instead of reading what will not be kept.
      res.set('Connection', 'close');
      send(
        receiver.refuse(
          new EbmsError('EBMS:0004', `the AS4 message exceeds ${deps.maxMessageBytes} bytes`),
          undefined,
          413,
        ),
      );
    };
    let body: Buffer;
    try {
      body = await readBody(req, deps.maxMessageBytes);
    } catch (e) {
      if (isGatewayError(e) && e.code === 'PAYLOAD_TOO_LARGE') {
        tooLarge();
        return;
      }
      throw e;
    }
    send(await receiver.receive(req.headers['content-type'] ?? '', body));
  });
}
