package dev.invoicegateway.converterharness;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import com.helger.cii.d16b.CIID16BCrossIndustryInvoiceTypeMarshaller;
import com.helger.diagnostics.error.list.ErrorList;
import com.helger.en16931.cii2ubl.CIIToUBL21Converter;
import com.helger.en16931.ubl2cii.UBL21InvoiceToCIID16BConverter;
import com.helger.ubl21.UBL21Marshaller;

import oasis.names.specification.ubl.schema.xsd.invoice_21.InvoiceType;
import un.unece.uncefact.data.standard.crossindustryinvoice._100.CrossIndustryInvoiceType;

/**
 * Times the reference EN 16931 converters (phax en16931-ubl2cii and en16931-cii2ubl) the way the transformation
 * benchmark times ours: document bytes in memory → parse → convert → serialise to bytes, on one thread, after a
 * warm-up, for a number of runs bounded by a time budget. Prints one JSON object on stdout; nothing else is printed.
 *
 * Usage: Harness [--warmup N] [--min-runs N] [--max-runs N] [--budget-ms N] [--xsd] [--out DIR] DIRECTION=FILE ...
 * where DIRECTION is ubl2cii or cii2ubl. Without --xsd the JAXB readers do not validate against the XML schemas,
 * since our side does not either; --xsd measures the libraries' default (schema-validating) reading.
 */
public final class Harness {
  private Harness() {}

  private interface Conversion {
    /** Converts one document; returns the output bytes. Throws when the converter reports an error. */
    byte[] convert(byte[] input);
  }

  private static Conversion ubl2cii(boolean xsd) {
    var reader = UBL21Marshaller.invoice();
    reader.setUseSchema(xsd);
    var writer = new CIID16BCrossIndustryInvoiceTypeMarshaller();
    writer.setUseSchema(xsd);
    return input -> {
      InvoiceType ubl = reader.read(input);
      if (ubl == null) throw new IllegalStateException("UBL 2.1 invoice could not be read");
      ErrorList errors = new ErrorList();
      CrossIndustryInvoiceType cii = UBL21InvoiceToCIID16BConverter.convertToCrossIndustryInvoice(ubl, errors);
      if (cii == null || errors.containsAtLeastOneError()) throw new IllegalStateException("ubl2cii failed: " + errors);
      byte[] out = writer.getAsBytes(cii);
      if (out == null) throw new IllegalStateException("CII could not be written");
      return out;
    };
  }

  private static Conversion cii2ubl(boolean xsd) {
    var reader = new CIID16BCrossIndustryInvoiceTypeMarshaller();
    reader.setUseSchema(xsd);
    var writer = UBL21Marshaller.invoice();
    writer.setUseSchema(xsd);
    var converter = new CIIToUBL21Converter();
    return input -> {
      CrossIndustryInvoiceType cii = reader.read(input);
      if (cii == null) throw new IllegalStateException("CII D16B invoice could not be read");
      ErrorList errors = new ErrorList();
      Object ubl = converter.convertCIItoUBL(cii, errors);
      if (ubl == null || errors.containsAtLeastOneError()) throw new IllegalStateException("cii2ubl failed: " + errors);
      // The benchmark documents are invoices (BT-3 380), so the converter makes a UBL Invoice.
      if (!(ubl instanceof InvoiceType)) throw new IllegalStateException("cii2ubl made " + ubl.getClass().getSimpleName() + ", not a UBL Invoice");
      byte[] out = writer.getAsBytes((InvoiceType) ubl);
      if (out == null) throw new IllegalStateException("UBL could not be written");
      return out;
    };
  }

  private static double percentile(double[] sorted, double p) {
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.min(sorted.length - 1, Math.max(0, i))];
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  private static String num(double v) {
    return String.format(Locale.ROOT, "%.4f", v);
  }

  public static void main(String[] args) throws Exception {
    int warmup = 50;
    int minRuns = 5;
    int maxRuns = 1000;
    long budgetMs = 5000;
    boolean xsd = false;
    Path outDir = null;
    List<String[]> jobs = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--min-runs" -> minRuns = Integer.parseInt(args[++i]);
        case "--max-runs" -> maxRuns = Integer.parseInt(args[++i]);
        case "--budget-ms" -> budgetMs = Long.parseLong(args[++i]);
        case "--xsd" -> xsd = true;
        case "--out" -> outDir = Path.of(args[++i]);
        default -> {
          String[] kv = args[i].split("=", 2);
          if (kv.length != 2 || !(kv[0].equals("ubl2cii") || kv[0].equals("cii2ubl"))) {
            System.err.println("unknown argument " + args[i] + " (want ubl2cii=FILE or cii2ubl=FILE)");
            System.exit(2);
          }
          jobs.add(kv);
        }
      }
    }
    // CPU time of the whole JVM (the converting thread, GC and JIT threads), as ours counts its whole process.
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    Conversion toCii = ubl2cii(xsd);
    Conversion toUbl = cii2ubl(xsd);
    StringBuilder json = new StringBuilder();
    json.append("{\"java\":").append(quote(System.getProperty("java.version"))).append(",\"xsd\":").append(xsd).append(",\"documents\":[");
    for (int j = 0; j < jobs.size(); j++) {
      String direction = jobs.get(j)[0];
      Path file = Path.of(jobs.get(j)[1]);
      byte[] input = Files.readAllBytes(file);
      Conversion c = direction.equals("ubl2cii") ? toCii : toUbl;
      long w0 = System.nanoTime();
      byte[] first = c.convert(input);
      double firstMs = (System.nanoTime() - w0) / 1e6;
      if (outDir != null) Files.write(outDir.resolve(file.getFileName().toString() + "." + direction + ".xml"), first);
      for (int k = 1; k < warmup; k++) c.convert(input);
      List<Double> runs = new ArrayList<>();
      long cpu0 = os.getProcessCpuTime();
      long start = System.nanoTime();
      while (runs.size() < minRuns || (runs.size() < maxRuns && (System.nanoTime() - start) / 1_000_000 < budgetMs)) {
        long t = System.nanoTime();
        c.convert(input);
        runs.add((System.nanoTime() - t) / 1e6);
      }
      long cpuNs = os.getProcessCpuTime() - cpu0;
      double[] sorted = runs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      double total = Arrays.stream(sorted).sum();
      if (j > 0) json.append(',');
      json.append("{\"direction\":").append(quote(direction))
          .append(",\"file\":").append(quote(file.getFileName().toString()))
          .append(",\"inputBytes\":").append(input.length)
          .append(",\"outputBytes\":").append(first.length)
          .append(",\"firstMs\":").append(num(firstMs))
          .append(",\"warmup\":").append(warmup)
          .append(",\"runs\":").append(sorted.length)
          .append(",\"p50Ms\":").append(num(percentile(sorted, 50)))
          .append(",\"p99Ms\":").append(num(percentile(sorted, 99)))
          .append(",\"meanMs\":").append(num(total / sorted.length))
          .append(",\"docsPerS\":").append(num(1000.0 * sorted.length / total))
          .append(",\"cpuMsPerDoc\":").append(num(cpuNs / 1e6 / sorted.length))
          .append('}');
    }
    json.append("]}");
    System.out.println(json);
  }
}
