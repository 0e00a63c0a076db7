package dev.invoicegateway.verapdf;

import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.verapdf.gf.foundry.VeraGreenfieldFoundryProvider;
import org.verapdf.pdfa.Foundries;
import org.verapdf.pdfa.PDFAParser;
import org.verapdf.pdfa.PDFAValidator;
import org.verapdf.pdfa.flavours.PDFAFlavour;
import org.verapdf.pdfa.results.TestAssertion;
import org.verapdf.pdfa.results.ValidationResult;

/**
 * Validates PDFs against a PDF/A flavour with veraPDF and prints one JSON verdict per file, as a JSON array:
 * {"file", "compliant", "flavour", "failures": [{"rule", "description", "context", "count"}]} or {"file", "error"}.
 * Usage: PdfACheck [--flavour 3b] file.pdf ... (one JVM for many files: veraPDF's start-up is the expensive part).
 * The flavour is forced rather than read from the file's XMP, so a PDF that claims nothing is still checked.
 */
public final class PdfACheck {
  private PdfACheck() {}

  public static void main(String[] args) throws Exception {
    String flavourId = "3b";
    List<String> files = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if ("--flavour".equals(args[i]) && i + 1 < args.length) flavourId = args[++i];
      else files.add(args[i]);
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (files.isEmpty()) {
      System.err.println("usage: PdfACheck [--flavour 3b] file.pdf ...");
      System.exit(2);
    }
    VeraGreenfieldFoundryProvider.initialise();
    PDFAFlavour flavour = PDFAFlavour.fromString(flavourId);
    if (flavour == PDFAFlavour.NO_FLAVOUR) {
      System.err.println("unknown PDF/A flavour: " + flavourId);
      System.exit(2);
    }
    StringBuilder json = new StringBuilder("[");
    for (int k = 0; k < files.size(); k++) {
      if (k > 0) json.append(',');
      json.append(check(new File(files.get(k)), flavour));
    }
    out.println(json.append(']'));
  }

  private static String check(File file, PDFAFlavour flavour) {
    StringBuilder s = new StringBuilder("{\"file\":").append(str(file.getPath()));
    try (PDFAParser parser = Foundries.defaultInstance().createParser(file, flavour);
         PDFAValidator validator = Foundries.defaultInstance().createValidator(flavour, false)) {
      ValidationResult result = validator.validate(parser);
      // One entry per failed rule (a rule can fail on many objects: counted, first context kept).
      Map<String, String[]> failures = new LinkedHashMap<>();
      Map<String, Integer> counts = new LinkedHashMap<>();
      for (TestAssertion a : result.getTestAssertions()) {
        if (a.getStatus() != TestAssertion.Status.FAILED) continue;
        String rule = a.getRuleId().getClause() + "-" + a.getRuleId().getTestNumber();
        String context = a.getLocation() == null ? "" : a.getLocation().getContext();
        failures.putIfAbsent(rule, new String[] {a.getMessage(), context});
        counts.merge(rule, 1, Integer::sum);
      }
      s.append(",\"compliant\":").append(result.isCompliant());
      s.append(",\"flavour\":").append(str(result.getPDFAFlavour().getId()));
      s.append(",\"failures\":[");
      int n = 0;
      for (Map.Entry<String, String[]> f : failures.entrySet()) {
        if (n++ > 0) s.append(',');
        s.append("{\"rule\":").append(str(f.getKey()))
            .append(",\"description\":").append(str(f.getValue()[0]))
            .append(",\"context\":").append(str(f.getValue()[1]))
            .append(",\"count\":").append(counts.get(f.getKey())).append('}');
      }
      s.append(']');
    } catch (Exception e) {
      s.append(",\"error\":").append(str(e.getClass().getSimpleName() + ": " + e.getMessage()));
    }
    return s.append('}').toString();
  }

  private static String str(String v) {
    if (v == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : v.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
