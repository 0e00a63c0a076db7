package dev.invoicegateway.phase4harness;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import com.helger.peppol.sbdh.PeppolSBDHData;
import com.helger.peppol.sbdh.PeppolSBDHDataReader;
import com.helger.peppolid.factory.PeppolIdentifierFactory;
import com.helger.phase4.crypto.IAS4CryptoFactory;
import com.helger.phase4.messaging.http.HttpRetrySettings;
import com.helger.phase4.peppol.Phase4PeppolSender;
import com.helger.phase4.sender.EAS4UserMessageSendResult;
import com.helger.phase4.sender.IAS4SignalMessageValidationResultHandler;
import com.helger.scope.mgr.ScopeManager;
import com.helger.security.certificate.TrustedCAChecker;
import com.helger.web.scope.mgr.WebScopeManager;
import com.helger.servlet.mock.MockServletContext;

/**
 * Sends complete SBDs with phase4's Peppol sender, the way a real phase4 access point does: compressed, signed,
 * encrypted, with the receipt's non-repudiation information compared against what was signed.
 */
final class Sender {
  private final IAS4CryptoFactory crypto;
  private final TrustedCAChecker caChecker;
  private final String seatId;

  Sender(Map<String, String> o) throws Exception {
    WebScopeManager.onGlobalBegin(MockServletContext.create());
    crypto = Harness.cryptoFactory(o);
    caChecker = Harness.apCaChecker(o);
    seatId = Harness.required(o, "seat-id");
  }

  String send(String url, String receiverCertPath, String sbdPath, String messageId) {
    AtomicReference<String> receiptCheck = new AtomicReference<>("NOT_CHECKED");
    AtomicReference<String> detail = new AtomicReference<>("");
    AtomicReference<String> response = new AtomicReference<>("");
    EAS4UserMessageSendResult result;
    try {
      X509Certificate receiverCert = Harness.pem(receiverCertPath);
      byte[] sbd = Files.readAllBytes(Path.of(sbdPath));
      // The SBD as phase4 reads it: sender, receiver, document type, process and C1 country come from its header.
      PeppolSBDHData data = new PeppolSBDHDataReader(PeppolIdentifierFactory.INSTANCE).extractData(new ByteArrayInputStream(sbd));
      result = Phase4PeppolSender.sbdhBuilder()
          .payloadAndMetadata(data)
          .senderPartyID(seatId)
          .receiverEndpointDetails(receiverCert, url)
          .cryptoFactory(crypto)
          .peppolAP_CAChecker(caChecker)
          .checkReceiverAPCertificate(true)
          .messageID(messageId)
          .httpRetrySettings(new HttpRetrySettings().setMaxRetries(0))
          .rawResponseConsumer(sent -> {
            if (sent.hasResponseContent()) response.set(new String(sent.getResponseContent(), java.nio.charset.StandardCharsets.UTF_8));
          })
          .signalMsgValidationResultHdl(new IAS4SignalMessageValidationResultHandler() {
            @Override
            public void onSuccess() {
              receiptCheck.set("RECEIPT_OK");
            }

            @Override
            public void onError(String message) {
              receiptCheck.set("RECEIPT_MISMATCH");
              detail.set(message);
            }

            @Override
            public void onNotApplicable() {
              receiptCheck.set("NOT_APPLICABLE");
            }
          })
          .sendMessageAndCheckForReceipt(ex -> detail.set(ex.getMessage()));
    } catch (Exception e) {
      return "RESULT " + messageId + " EXCEPTION NOT_CHECKED " + Harness.oneLine(e.toString());
    }
    String d = detail.get();
    if ((d == null || d.isEmpty()) && !result.isSuccess()) d = response.get();
    return "RESULT " + messageId + " " + result.getID() + " " + receiptCheck.get() + " " + Harness.oneLine(d);
  }

  void close() {
    if (ScopeManager.getGlobalScopeOrNull() != null) WebScopeManager.onGlobalEnd();
  }
}
