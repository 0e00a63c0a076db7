import { detectionOutcome } from '../../../src/documents/detection';
import { ECHO_MESSAGE_MAX_CHARS } from '../../../src/core/truncate';

/** A document's own text is quoted back in the status record and the event, bounded however long it is. */
describe('detection outcome messages', () => {
  it('quote a megabyte-long root element name and namespace in bounded form', () => {
    const name = `E${'x'.repeat(1_000_000)}`;
    const ns = `urn:${'n'.repeat(1_000)}`;
    const outcome = detectionOutcome(Buffer.from(`<${name} xmlns="${ns}"/>`));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.code).toBe('UNKNOWN_FORMAT');
    expect(outcome.message.length).toBeLessThanOrEqual(ECHO_MESSAGE_MAX_CHARS);
    expect(outcome.message).toMatch(/^document format not recognised: root element <Exxxx/);
    expect(outcome.message).toContain('…');
  });

  it('quote a megabyte-long CustomizationID in bounded form', () => {
    const id = `urn:${'c'.repeat(1_000_000)}`;
    const xml =
      '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" ' +
      'xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">' +
      `<cbc:CustomizationID>${id}</cbc:CustomizationID></Invoice>`;
    const outcome = detectionOutcome(Buffer.from(xml));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message.length).toBeLessThanOrEqual(ECHO_MESSAGE_MAX_CHARS);
    expect(outcome.message).toContain('CustomizationID (BT-24) "urn:cccc');
  });
});
