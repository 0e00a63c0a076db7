/**
 * An sRGB (IEC 61966-2.1) ICC profile, version 2.1, built in code so no binary is shipped: a PDF/A OutputIntent needs
 * one (ISO 19005-3 6.2.3). Display class, RGB data, XYZ connection space; the colorants are the sRGB primaries
 * chromatically adapted to D50 (Bradford), as the ICC's own sRGB profiles give them, and each channel's tone curve is
 * the sRGB transfer function sampled at 1024 points.
 */

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');

/** s15Fixed16Number. */
function fixed(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(Math.round(v * 65536));
  return b;
}

function xyz(x: number, y: number, z: number): Buffer {
  return Buffer.concat([ascii('XYZ '), Buffer.alloc(4), fixed(x), fixed(y), fixed(z)]);
}

/** textDescriptionType (ICC v2): ASCII part only; the Unicode and ScriptCode parts are present but empty. */
function desc(text: string): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(text.length + 1);
  return Buffer.concat([
    ascii('desc'),
    Buffer.alloc(4),
    count,
    ascii(text),
    Buffer.alloc(1),
    Buffer.alloc(4 + 4 + 2 + 1 + 67),
  ]);
}

function text(value: string): Buffer {
  return Buffer.concat([ascii('text'), Buffer.alloc(4), ascii(value), Buffer.alloc(1)]);
}

/** The sRGB electro-optical transfer function, sampled. */
function srgbCurve(points = 1024): Buffer {
  const b = Buffer.alloc(12 + 2 * points);
  ascii('curv').copy(b, 0);
  b.writeUInt32BE(points, 8);
  for (let k = 0; k < points; k++) {
    const v = k / (points - 1);
    const linear = v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    b.writeUInt16BE(Math.round(linear * 65535), 12 + 2 * k);
  }
  return b;
}

const pad4 = (b: Buffer): Buffer => (b.length % 4 === 0 ? b : Buffer.concat([b, Buffer.alloc(4 - (b.length % 4))]));

let cached: Buffer | undefined;

/** The profile's bytes (built once). */
export function srgbIccProfile(): Buffer {
  if (cached) return Buffer.from(cached);
  const curve = srgbCurve();
  // Tags in order; the three tone curves share one element, as ICC allows.
  const elements: [string, Buffer][] = [
    ['desc', desc('sRGB IEC61966-2.1')],
    ['cprt', text('No copyright, use freely')],
    ['wtpt', xyz(0.9642, 1.0, 0.8249)],
    ['rXYZ', xyz(0.4361, 0.2225, 0.0139)],
    ['gXYZ', xyz(0.3851, 0.7169, 0.0971)],
    ['bXYZ', xyz(0.1431, 0.0606, 0.7141)],
    ['rTRC', curve],
    ['gTRC', curve],
    ['bTRC', curve],
  ];
  const tableSize = 4 + 12 * elements.length;
  let offset = 128 + tableSize;
  const table = Buffer.alloc(tableSize);
  table.writeUInt32BE(elements.length, 0);
  const data: Buffer[] = [];
  let curveOffset = -1;
  elements.forEach(([sig, body], k) => {
    const shared = body === curve && curveOffset !== -1;
    const at = shared ? curveOffset : offset;
    if (body === curve && curveOffset === -1) curveOffset = offset;
    ascii(sig).copy(table, 4 + 12 * k);
    table.writeUInt32BE(at, 4 + 12 * k + 4);
    table.writeUInt32BE(body.length, 4 + 12 * k + 8);
    if (!shared) {
      const padded = pad4(body);
      data.push(padded);
      offset += padded.length;
    }
  });
  const header = Buffer.alloc(128);
  header.writeUInt32BE(offset, 0); // profile size
  header.writeUInt32BE(0x02100000, 8); // version 2.1.0
  ascii('mntr').copy(header, 12);
  ascii('RGB ').copy(header, 16);
  ascii('XYZ ').copy(header, 20);
  // Creation date 2026-01-01 00:00:00 (fixed: the profile's bytes do not change between builds).
  [2026, 1, 1, 0, 0, 0].forEach((v, k) => header.writeUInt16BE(v, 24 + 2 * k));
  ascii('acsp').copy(header, 36);
  header.writeUInt32BE(0, 64); // perceptual
  fixed(0.9642).copy(header, 68); // PCS illuminant D50
  fixed(1.0).copy(header, 72);
  fixed(0.8249).copy(header, 76);
  cached = Buffer.concat([header, table, ...data]);
  return Buffer.from(cached);
}
