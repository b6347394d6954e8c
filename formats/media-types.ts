/**
 * What media bytes are, read from their first bytes (magic numbers), and data URLs read into base64:
 * shared by the builders of formats that take inline media (REFERENCE §5.5). Apps declare a type from
 * a file's extension or a default (`data:image/jpeg` for a PNG screenshot), and a provider that checks
 * the bytes answers 400 (Anthropic: "Image does not match the provided media type"). Pure.
 */

/** The first bytes of base64 `data` (at most `n`), or undefined when they are not base64. */
function leadingBytes(data: string, n: number): Uint8Array | undefined {
  const head = data.slice(0, Math.ceil(n / 3) * 4).replace(/\s/g, "");
  try {
    const bin = atob(head.length % 4 === 0 ? head : head.slice(0, head.length - (head.length % 4)));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** ISO-BMFF brands (`ftyp` box at byte 4) of HEIF/HEIC and AVIF images. */
const HEIF_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]);

/**
 * The image type base64 `data` holds, by its magic bytes: `image/png`, `image/jpeg`, `image/gif`,
 * `image/webp`, `image/heic`, `image/avif`, `image/bmp`, `image/tiff`, `image/svg+xml` (text starting
 * with `<svg` or `<?xml`, after a byte-order mark or white space); undefined when none matches or
 * `data` is not base64.
 */
export function sniffImageType(data: string): string | undefined {
  const b = leadingBytes(data, 64);
  if (!b || b.length < 4) return undefined;
  if (b[0] === 0x89 && ascii(b, 1, 4) === "PNG") return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return "image/gif";
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP") return "image/webp";
  if (ascii(b, 4, 8) === "ftyp") {
    const brand = ascii(b, 8, 12);
    if (brand === "avif" || brand === "avis") return "image/avif";
    if (HEIF_BRANDS.has(brand)) return "image/heic";
  }
  if (b[0] === 0x42 && b[1] === 0x4d) return "image/bmp";
  if (ascii(b, 0, 4) === "II*\0" || ascii(b, 0, 4) === "MM\0*") return "image/tiff";
  const text = new TextDecoder().decode(b).replace(/^\uFEFF/, "").trimStart();
  if (text.startsWith("<svg") || text.startsWith("<?xml")) return "image/svg+xml";
  return undefined;
}

/**
 * `data:<mime>[;params][;base64],<payload>` → its media type (`application/octet-stream` when none)
 * and base64 data: a base64 payload as it is, a percent-encoded one encoded (UTF-8). Undefined for
 * anything else, or a payload that does not decode.
 */
export function dataUrlBase64(url: string): { mimeType: string; data: string } | undefined {
  const comma = url.indexOf(",");
  if (!url.startsWith("data:") || comma < 0) return undefined;
  const meta = url.slice(5, comma).split(";");
  const mimeType = meta[0] || "application/octet-stream";
  const payload = url.slice(comma + 1);
  if (meta.slice(1).some((x) => x.toLowerCase() === "base64")) return { mimeType, data: payload };
  try {
    const bytes = new TextEncoder().encode(decodeURIComponent(payload));
    let bin = "";
    for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]!);
    return { mimeType, data: btoa(bin) };
  } catch {
    return undefined;
  }
}

/**
 * A Gemini Files API file address (`https://generativelanguage.googleapis.com/v1beta/files/<id>`): it
 * is read with the Google API key only (ai.google.dev/gemini-api/docs/files).
 */
export const GEMINI_FILES_API = /^https:\/\/generativelanguage\.googleapis\.com\/[^?#]*\bfiles\/[^/?#]+/;

/**
 * Whether `url` is a file address only Google can read: a `gs://` Cloud Storage object or a Gemini
 * Files API file ({@link GEMINI_FILES_API}). Gemini takes these as `fileData.fileUri`; another
 * provider fetching it gets no file (no credentials, or no `gs` scheme), so the builders of other
 * formats drop such a source with a warning instead of sending it as a URL.
 */
export function isGoogleOnlyUri(url: string): boolean {
  return url.startsWith("gs://") || GEMINI_FILES_API.test(url);
}
