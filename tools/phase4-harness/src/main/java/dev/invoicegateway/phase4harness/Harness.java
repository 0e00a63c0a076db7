package dev.invoicegateway.phase4harness;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import com.helger.phase4.crypto.AS4CryptoFactoryInMemoryKeyStore;
import com.helger.phase4.crypto.IAS4CryptoFactory;
import com.helger.security.certificate.TrustedCAChecker;
import com.helger.security.revocation.ERevocationCheckMode;

/**
 * A loopback Peppol AS4 peer on phase4 for interoperability tests.
 *
 * <pre>
 *   receive --keystore ap.p12 --password pw --alias a --truststore ap-truststore.p12 --ap-ca ap-ca.crt.pem
 *           --out dir --served 0088:123,0088:456 [--port 0]
 *     prints "READY &lt;url&gt;", then "RECEIVED &lt;messageId&gt; &lt;file&gt;" per stored message
 *   send    --keystore ap.p12 --password pw --alias a --truststore ap-truststore.p12 --ap-ca ap-ca.crt.pem
 *     reads "SEND &lt;url&gt; &lt;receiver-cert.pem&gt; &lt;sbd-file&gt; &lt;messageId&gt;" lines from stdin and prints one
 *     "RESULT &lt;messageId&gt; &lt;phase4 result&gt; &lt;receipt check&gt; &lt;detail&gt;" line per message;
 *     "BENCH &lt;url&gt; &lt;receiver-cert.pem&gt; &lt;sbd-file&gt; &lt;count&gt; &lt;concurrency&gt; &lt;id-prefix&gt;" sends count
 *     messages closed-loop on concurrency threads and prints one "BENCHRESULT &lt;json&gt;" line (Sender.bench)
 * </pre>
 *
 * Revocation is not checked here (the test PKI's CRL distribution points are served only inside the tests).
 */
public final class Harness {
  private Harness() {}

  static Map<String, String> options(String[] args, int from) {
    Map<String, String> out = new HashMap<>();
    for (int i = from; i < args.length - 1; i += 2) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("expected an option at " + args[i]);
      out.put(args[i].substring(2), args[i + 1]);
    }
    return out;
  }

  static String required(Map<String, String> o, String name) {
    String v = o.get(name);
    if (v == null) throw new IllegalArgumentException("missing --" + name);
    return v;
  }

  static KeyStore pkcs12(String path, String password) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(path)) {
      ks.load(in, password.toCharArray());
    }
    return ks;
  }

  static X509Certificate pem(String path) throws Exception {
    try (InputStream in = Files.newInputStream(Path.of(path))) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  static IAS4CryptoFactory cryptoFactory(Map<String, String> o) throws Exception {
    String password = required(o, "password");
    return new AS4CryptoFactoryInMemoryKeyStore(pkcs12(required(o, "keystore"), password), required(o, "alias"), password.toCharArray(),
        pkcs12(required(o, "truststore"), password));
  }

  static TrustedCAChecker apCaChecker(Map<String, String> o) throws Exception {
    return new TrustedCAChecker(ERevocationCheckMode.NONE, Duration.ofHours(1), 100, pem(required(o, "ap-ca")));
  }

  static String oneLine(String s) {
    return s == null ? "" : s.replaceAll("\\s+", " ").trim();
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: receive|send [options]");
      System.exit(2);
    }
    Map<String, String> o = options(args, 1);
    switch (args[0]) {
      case "receive" -> Receiver.run(o);
      case "send" -> {
        Sender sender = new Sender(o);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
          System.out.println("READY sender");
          System.out.flush();
          String line;
          while ((line = in.readLine()) != null) {
            String[] p = line.trim().split(" ");
            if (p.length == 5 && p[0].equals("SEND")) System.out.println(sender.send(p[1], p[2], p[3], p[4]));
            else if (p.length == 7 && p[0].equals("BENCH")) {
              try {
                System.out.println("BENCHRESULT " + sender.bench(p[1], p[2], p[3], Integer.parseInt(p[4]), Integer.parseInt(p[5]), p[6]));
              } catch (Exception e) {
                System.out.println("BENCHRESULT {\"error\":\"" + oneLine(e.toString()).replace("\\", "\\\\").replace("\"", "\\\"") + "\"}");
              }
            }
            else System.out.println("RESULT - BAD_COMMAND - " + oneLine(line));
            System.out.flush();
          }
        } finally {
          sender.close();
        }
      }
      default -> {
        System.err.println("unknown mode " + args[0]);
        System.exit(2);
      }
    }
  }
}
