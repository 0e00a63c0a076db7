import java.io.File;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.Schema;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.xml.sax.ErrorHandler;
import org.xml.sax.SAXParseException;

/**
 * Reference XSD validation with the JDK's own validator, for the tests that compare it with xmllint.
 * Usage: java XsdReference.java <schema.xsd> <document>... ; prints one line per document:
 * "VALID\t<file>" or "INVALID\t<file>\t<line>: <first message>".
 */
public class XsdReference {
  public static void main(String[] args) throws Exception {
    SchemaFactory factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
    factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
    factory.setProperty(XMLConstants.ACCESS_EXTERNAL_DTD, "");
    factory.setProperty(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "file");
    Schema schema = factory.newSchema(new File(args[0]));
    for (int k = 1; k < args.length; k++) {
      Validator validator = schema.newValidator();
      validator.setProperty(XMLConstants.ACCESS_EXTERNAL_DTD, "");
      validator.setProperty(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
      List<String> errors = new ArrayList<>();
      validator.setErrorHandler(new ErrorHandler() {
        public void warning(SAXParseException e) {}
        public void error(SAXParseException e) { errors.add(e.getLineNumber() + ": " + e.getMessage()); }
        public void fatalError(SAXParseException e) { errors.add(e.getLineNumber() + ": " + e.getMessage()); }
      });
      try {
        validator.validate(new StreamSource(new File(args[k])));
      } catch (SAXParseException e) {
        if (errors.isEmpty()) errors.add(e.getLineNumber() + ": " + e.getMessage());
      }
      System.out.println(errors.isEmpty() ? "VALID\t" + args[k] : "INVALID\t" + args[k] + "\t" + errors.get(0).replace('\n', ' '));
    }
  }
}
