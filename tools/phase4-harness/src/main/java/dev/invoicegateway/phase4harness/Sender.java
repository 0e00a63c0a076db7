package dev.invoicegateway.phase4harness;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
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
    try {
      return "RESULT " + messageId + " " + String.join(" ", send(url, Harness.pem(receiverCertPath), readSbd(sbdPath), messageId));
    } catch (Exception e) {
      return "RESULT " + messageId + " EXCEPTION NOT_CHECKED " + Harness.oneLine(e.toString());
    }
  }

  /** The SBD as phase4 reads it: sender, receiver, document type, process and C1 country come from its header. */
  static PeppolSBDHData readSbd(String sbdPath) throws Exception {
    byte[] sbd = Files.readAllBytes(Path.of(sbdPath));
    return new PeppolSBDHDataReader(PeppolIdentifierFactory.INSTANCE).extractData(new ByteArrayInputStream(sbd));
  }

  /** { phase4 result id, receipt check, detail }; throws what phase4 throws while building the message. */
  String[] send(String url, X509Certificate receiverCert, PeppolSBDHData data, String messageId) throws Exception {
    AtomicReference<String> receiptCheck = new AtomicReference<>("NOT_CHECKED");
    AtomicReference<String> detail = new AtomicReference<>("");
    AtomicReference<String> response = new AtomicReference<>("");
    EAS4UserMessageSendResult result = Phase4PeppolSender.sbdhBuilder()
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
    String d = detail.get();
    if ((d == null || d.isEmpty()) && !result.isSuccess()) d = response.get();
    return new String[] { result.getID(), receiptCheck.get(), Harness.oneLine(d) };
  }

  /**
   * Sends `count` messages of the SBD in `sbdPath` on `concurrency` threads, each sending its next message as soon as
   * the previous one is answered (closed loop), and returns one JSON line: {"ok":n,"failed":n,"elapsedMs":x,
   * "latenciesMs":[...],"firstError":"..."}. Each thread reads the SBD once (phase4's SBD reader is not part of a
   * send) and gives every message a new SBDH InstanceIdentifier and MessageId, so no receiver sees a duplicate.
   * A message counts as ok when phase4 reports success and the receipt's references matched what it signed.
   */
  String bench(String url, String receiverCertPath, String sbdPath, int count, int concurrency, String idPrefix) throws Exception {
    X509Certificate receiverCert = Harness.pem(receiverCertPath);
    AtomicInteger next = new AtomicInteger();
    AtomicInteger ok = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    AtomicReference<String> firstError = new AtomicReference<>();
    double[] latencies = new double[count];
    PeppolSBDHData[] copies = new PeppolSBDHData[concurrency];
    for (int t = 0; t < concurrency; t++) copies[t] = readSbd(sbdPath);
    Thread[] threads = new Thread[concurrency];
    long t0 = System.nanoTime();
    for (int t = 0; t < concurrency; t++) {
      PeppolSBDHData data = copies[t];
      threads[t] = new Thread(() -> {
        for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
          String id = idPrefix + "-" + i + "@phase4-bench";
          data.setInstanceIdentifier(UUID.randomUUID().toString());
          long s = System.nanoTime();
          String error;
          try {
            String[] r = send(url, receiverCert, data, id);
            error = r[0].equals("success") && r[1].equals("RECEIPT_OK") ? null : String.join(" ", r);
          } catch (Exception e) {
            error = e.toString();
          }
          latencies[i] = (System.nanoTime() - s) / 1e6;
          if (error == null) ok.incrementAndGet();
          else {
            latencies[i] = -1;
            failed.incrementAndGet();
            firstError.compareAndSet(null, id + ": " + Harness.oneLine(error));
          }
        }
      });
      threads[t].start();
    }
    for (Thread th : threads) th.join();
    double elapsedMs = (System.nanoTime() - t0) / 1e6;
    StringBuilder json = new StringBuilder("{\"ok\":").append(ok.get()).append(",\"failed\":").append(failed.get()).append(",\"elapsedMs\":")
        .append(elapsedMs).append(",\"latenciesMs\":[");
    boolean first = true;
    for (double l : latencies) {
      if (l < 0) continue;
      if (!first) json.append(',');
      json.append(l);
      first = false;
    }
    json.append("],\"firstError\":");
    String fe = firstError.get();
    json.append(fe == null ? "null" : "\"" + fe.replace("\\", "\\\\").replace("\"", "\\\"") + "\"");
    return json.append('}').toString();
  }

  void close() {
    if (ScopeManager.getGlobalScopeOrNull() != null) WebScopeManager.onGlobalEnd();
  }
}
