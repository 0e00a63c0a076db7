package dev.invoicegateway.phase4harness;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.w3c.dom.Node;

import com.helger.collection.commons.CommonsArrayList;
import com.helger.collection.commons.ICommonsList;
import com.helger.http.EHttpMethod;
import com.helger.http.header.HttpHeaderMap;
import com.helger.peppol.sbdh.PeppolSBDHData;
import com.helger.peppol.sbdh.PeppolSBDHDataReader;
import com.helger.peppolid.factory.PeppolIdentifierFactory;
import com.helger.phase4.attachment.WSS4JAttachment;
import com.helger.phase4.crypto.IAS4CryptoFactory;
import com.helger.phase4.ebms3header.Ebms3SignalMessage;
import com.helger.phase4.ebms3header.Ebms3UserMessage;
import com.helger.phase4.error.AS4ErrorList;
import com.helger.phase4.incoming.AS4RequestHandler;
import com.helger.phase4.incoming.AS4ServerInitializer;
import com.helger.phase4.incoming.IAS4IncomingMessageMetadata;
import com.helger.phase4.incoming.IAS4IncomingMessageState;
import com.helger.phase4.incoming.mgr.AS4ProfileSelector;
import com.helger.phase4.incoming.spi.AS4MessageProcessorResult;
import com.helger.phase4.incoming.spi.AS4SignalMessageProcessorResult;
import com.helger.phase4.incoming.spi.IAS4IncomingMessageProcessorSPI;
import com.helger.phase4.model.error.EEbmsError;
import com.helger.phase4.model.pmode.IPMode;
import com.helger.phase4.profile.peppol.AS4PeppolProfileRegistarSPI;
import com.helger.phase4.servlet.AS4UnifiedResponse;
import com.helger.phase4.servlet.AS4XServletHandler;
import com.helger.phase4.servlet.IAS4ServletRequestHandlerCustomizer;
import com.helger.security.certificate.ECertificateCheckResult;
import com.helger.security.certificate.TrustedCAChecker;
import com.helger.web.scope.IRequestWebScopeWithoutResponse;
import com.helger.web.scope.mgr.WebScopeManager;
import com.helger.xservlet.AbstractXServlet;

import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;

/**
 * phase4 as a receiving Peppol access point on 127.0.0.1: its AS4 request handler (WSS4J decryption and signature
 * checks against the trust store, duplicate detection, signed receipts and ebMS errors) with a message processor that
 * applies the Peppol checks phase4's own Peppol servlet makes (signed and decrypted, signer chains to the AP CA, one
 * SBD attachment that reads as a Peppol SBDH, receiver served) and stores each SBD as a file.
 */
final class Receiver {
  private Receiver() {}

  static final class Processor implements IAS4IncomingMessageProcessorSPI {
    private final TrustedCAChecker caChecker;
    private final Set<String> served;
    private final Path out;

    Processor(TrustedCAChecker caChecker, Set<String> served, Path out) {
      this.caChecker = caChecker;
      this.served = served;
      this.out = out;
    }

    private static void error(AS4ErrorList errors, EEbmsError code, String messageId, String text, String detail) {
      var b = code.errorBuilder(Locale.US).refToMessageInError(messageId).description(text, Locale.US);
      if (detail != null) b.errorDetail(detail);
      errors.add(b.build());
    }

    @Override
    public AS4MessageProcessorResult processAS4UserMessage(IAS4IncomingMessageMetadata meta, HttpHeaderMap headers, Ebms3UserMessage um, IPMode pmode,
        Node payload, ICommonsList<WSS4JAttachment> attachments, IAS4IncomingMessageState state, AS4ErrorList errors) {
      String id = um.getMessageInfo().getMessageId();
      if (!state.isSoapSignatureChecked()) {
        error(errors, EEbmsError.EBMS_FAILED_AUTHENTICATION, id, "the message is not signed", null);
        return AS4MessageProcessorResult.createFailure();
      }
      if (!state.isSoapDecrypted()) {
        error(errors, EEbmsError.EBMS_FAILED_DECRYPTION, id, "the message is not encrypted", null);
        return AS4MessageProcessorResult.createFailure();
      }
      X509Certificate signer = state.getSigningCertificate();
      ECertificateCheckResult check = caChecker.checkCertificate(signer);
      if (!check.isValid()) {
        error(errors, EEbmsError.EBMS_FAILED_AUTHENTICATION, id, "the signing certificate is not a valid AP certificate: " + check, null);
        return AS4MessageProcessorResult.createFailure();
      }
      if (attachments == null || attachments.size() != 1) {
        error(errors, EEbmsError.EBMS_OTHER, id, "exactly one attachment is expected", null);
        return AS4MessageProcessorResult.createFailure();
      }
      byte[] sbd;
      PeppolSBDHData data;
      try (InputStream in = attachments.getFirstOrNull().getSourceStream()) {
        sbd = in.readAllBytes();
        data = new PeppolSBDHDataReader(PeppolIdentifierFactory.INSTANCE).extractData(new java.io.ByteArrayInputStream(sbd));
      } catch (Exception e) {
        error(errors, EEbmsError.EBMS_OTHER, id, "Peppol SBDH Issue: " + e.getMessage(), null);
        return AS4MessageProcessorResult.createFailure();
      }
      String receiver = data.getReceiverValue().toLowerCase(Locale.ROOT);
      if (!served.contains(receiver)) {
        error(errors, EEbmsError.EBMS_OTHER, id, "the receiver " + data.getReceiverValue() + " is not served", "PEPPOL:NOT_SERVICED");
        return AS4MessageProcessorResult.createFailure();
      }
      try {
        Path file = out.resolve(id.replaceAll("[^A-Za-z0-9._-]", "_") + ".xml");
        Files.write(file, sbd);
        synchronized (System.out) {
          System.out.println("RECEIVED " + id + " " + file);
          System.out.flush();
        }
      } catch (Exception e) {
        error(errors, EEbmsError.EBMS_OTHER, id, "cannot store: " + e.getMessage(), null);
        return AS4MessageProcessorResult.createFailure();
      }
      return AS4MessageProcessorResult.createSuccess();
    }

    @Override
    public AS4SignalMessageProcessorResult processAS4SignalMessage(IAS4IncomingMessageMetadata meta, HttpHeaderMap headers, Ebms3SignalMessage signal,
        IPMode pmode, IAS4IncomingMessageState state, AS4ErrorList errors) {
      return AS4SignalMessageProcessorResult.createSuccess();
    }

    @Override
    public void processAS4ResponseMessage(IAS4IncomingMessageMetadata meta, IAS4IncomingMessageState state, String messageId, byte[] response,
        boolean responseIsAsync, AS4ErrorList errors) {
      // One-way push only: nothing to do.
    }
  }

  // Set before Jetty instantiates the servlet, which needs phase4's global scope and so cannot be built earlier.
  static IAS4CryptoFactory crypto;
  static Processor processor;

  /** phase4's AS4 servlet with our crypto factory and processor instead of the global configuration and SPI lookup. */
  public static final class Servlet extends AbstractXServlet {
    public Servlet() {
      settings().setMultipartEnabled(false);
      AS4XServletHandler handler = new AS4XServletHandler();
      handler.setRequestHandlerCustomizer(new IAS4ServletRequestHandlerCustomizer() {
        @Override
        public void customizeBeforeHandling(IRequestWebScopeWithoutResponse scope, AS4UnifiedResponse response, AS4RequestHandler rh) {
          rh.setCryptoFactory(crypto);
          rh.setProcessorSupplier(() -> new CommonsArrayList<>(processor));
        }

        @Override
        public void customizeAfterHandling(IRequestWebScopeWithoutResponse scope, AS4UnifiedResponse response, AS4RequestHandler rh) {
          // nothing
        }
      });
      handlerRegistry().registerHandler(EHttpMethod.POST, handler);
    }
  }

  static void run(Map<String, String> o) throws Exception {
    crypto = Harness.cryptoFactory(o);
    Path out = Path.of(Harness.required(o, "out"));
    Files.createDirectories(out);
    Set<String> served = Arrays.stream(Harness.required(o, "served").split(",")).map(s -> s.trim().toLowerCase(Locale.ROOT)).filter(s -> !s.isEmpty())
        .collect(Collectors.toSet());
    processor = new Processor(Harness.apCaChecker(o), served, out);

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(Integer.parseInt(o.getOrDefault("port", "0")));
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.setContextPath("/");
    context.addEventListener(new ServletContextListener() {
      @Override
      public void contextInitialized(ServletContextEvent e) {
        WebScopeManager.onGlobalBegin(e.getServletContext());
        AS4ProfileSelector.setCustomDefaultAS4ProfileID(AS4PeppolProfileRegistarSPI.AS4_PROFILE_ID);
        AS4ServerInitializer.initAS4Server();
      }

      @Override
      public void contextDestroyed(ServletContextEvent e) {
        AS4ServerInitializer.shutdownAS4Server();
        WebScopeManager.onGlobalEnd();
      }
    });
    ServletHolder holder = new ServletHolder(Servlet.class);
    holder.setInitOrder(1);
    context.addServlet(holder, "/as4");
    server.setHandler(context);
    server.start();
    System.out.println("READY http://127.0.0.1:" + connector.getLocalPort() + "/as4");
    System.out.flush();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        server.stop();
      } catch (Exception ignored) {
        // exiting anyway
      }
    }));
    server.join();
  }
}
