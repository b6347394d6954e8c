/**
 * Images and documents → Anthropic `source` objects (REFERENCE §1.1, §5.5): what Anthropic takes and
 * what it refuses, decided before sending, each drop or change with a warning (SPEC F-2).
 */
import type { DocumentPart, ImagePart, Warnings } from "../hub.ts";
import type { JsonObject as Json } from "../json.ts";
import { withArticle } from "../article.ts";
import { dataUrlBase64, isGoogleOnlyUri, sniffImageType } from "../media-types.ts";

/** The image types Anthropic takes (REFERENCE §5.5: "Anthropic accepts only jpeg/png/gif/webp for images"). */
export const ANTHROPIC_IMAGE_TYPES: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/**
 * Inline image bytes → a base64 source with the type the bytes are (by their magic bytes,
 * media-types.ts `sniffImageType`; the declared type when they tell nothing): Anthropic checks the bytes
 * against `media_type` and answers 400 on a mismatch, so a PNG declared `image/jpeg` goes as
 * `image/png` (warning `corrected_media_type`). A type it refuses (SVG, HEIC, AVIF, BMP, TIFF, …) →
 * null with a `dropped_media` warning.
 */
function imageSource(declared: string, data: string, w: Warnings): Json | null {
  const sniffed = sniffImageType(data);
  const type = sniffed ?? declared.toLowerCase();
  if (!ANTHROPIC_IMAGE_TYPES.has(type)) {
    w.add("dropped_media", `An image of type ${type} was not sent: Anthropic takes JPEG, PNG, GIF and WebP images only.`);
    return null;
  }
  if (sniffed && sniffed !== declared.toLowerCase()) {
    w.add("corrected_media_type", `An image declared ${declared} holds ${sniffed} bytes; it was sent as ${sniffed}.`);
  }
  return { type: "base64", media_type: type, data };
}

/**
 * Whether a document of media type `mime` is text Anthropic can read as a `{type: "text"}` source:
 * `text/*`, JSON (`application/json`, `+json`), CSV, Markdown, XML, YAML. Parameters (`; charset=…`)
 * are ignored.
 */
export function isTextLikeType(mime: string): boolean {
  const t = mime.split(";")[0]!.trim().toLowerCase();
  if (t.startsWith("text/")) return true;
  if (t.endsWith("+json") || t.endsWith("+xml")) return true;
  return ["application/json", "application/csv", "application/x-csv", "application/markdown", "application/x-markdown", "application/xml", "application/yaml", "application/x-yaml", "application/x-ndjson", "application/jsonl"].includes(t);
}

/** Base64 `data` decoded as strict UTF-8 (a byte-order mark dropped), or undefined when it is not base64 or not valid UTF-8. */
function utf8FromBase64(data: string): string | undefined {
  try {
    const bin = atob(data.replace(/\s/g, ""));
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Inline document bytes → an Anthropic source: a PDF as `{type: "base64", media_type:
 * "application/pdf"}` (Anthropic's base64 document source takes PDF only, REFERENCE §5.5); a text-like
 * type ({@link isTextLikeType}) decoded into `{type: "text", media_type: "text/plain", data}` (the one
 * text source type Anthropic takes); text that is not valid UTF-8, or any other type (a Word file,
 * a ZIP, …), → null with a `dropped_media` warning, instead of a request Anthropic answers 400.
 */
function documentSource(declared: string, data: string, w: Warnings): Json | null {
  const type = declared.split(";")[0]!.trim().toLowerCase();
  if (type === "application/pdf") return { type: "base64", media_type: "application/pdf", data };
  if (isTextLikeType(type)) {
    const text = utf8FromBase64(data);
    if (text !== undefined) return { type: "text", media_type: "text/plain", data: text };
    w.add("dropped_media", `A document of type ${type} was not sent: its bytes are not UTF-8 text, and Anthropic takes base64 documents as PDF only.`);
    return null;
  }
  w.add("dropped_media", `A document of type ${type} was not sent: Anthropic takes documents as PDF or plain text only.`);
  return null;
}

/**
 * An image or document part → its Anthropic `source`, or null when it cannot be sent (warned here):
 * - base64 → an image's source as {@link imageSource} decides, a document's as {@link documentSource}
 *   (PDF as base64, text as a text source, anything else dropped);
 * - a `data:` URL → read into base64 (media-types.ts `dataUrlBase64`; Anthropic takes no data URL as
 *   a URL), an unreadable one dropped; a Google-only URI (`gs://`, the Gemini Files API; media-types.ts
 *   `isGoogleOnlyUri`) dropped for Anthropic's own API (`anthropic`, `claude-code`: its URL sources are
 *   fetched over HTTP(S)), but sent as it came to a third-party server (`thirdParty`: an
 *   `anthropic-compatible` server, which may read it, as the Chat builder's rule for
 *   `openai-compatible` has it); any other URL → `{type: "url"}`;
 * - a file id → `{type: "file"}` only for Anthropic's own (`file_…`, Files API); another provider's
 *   (OpenAI `file-…`, Gemini `files/…`) dropped, as the Gemini lane does;
 * - a plain-text source → `{type: "text"}` for a document; an image cannot have one (dropped).
 */
export function mediaSource(p: ImagePart | DocumentPart, w: Warnings, thirdParty = false): Json | null {
  const s = p.source;
  const image = p.type === "image";
  switch (s.kind) {
    case "base64":
      return image ? imageSource(s.mediaType, s.data, w) : documentSource(s.mediaType, s.data, w);
    case "url": {
      if (!thirdParty && isGoogleOnlyUri(s.url)) {
        w.add("dropped_media", `${withArticle(p.type)} given by a Google-only file URI (gs:// or the Gemini Files API) was not sent: Anthropic cannot read it.`);
        return null;
      }
      if (!s.url.startsWith("data:")) return { type: "url", url: s.url };
      const d = dataUrlBase64(s.url);
      if (!d) {
        w.add("dropped_media", `${withArticle(p.type)} with an unreadable data: URL was not sent to Anthropic.`);
        return null;
      }
      const type = s.mediaType ?? d.mimeType;
      return image ? imageSource(type, d.data, w) : documentSource(type, d.data, w);
    }
    case "file_id":
      if (s.fileId.startsWith("file_")) return { type: "file", file_id: s.fileId };
      w.add("dropped_media", `${withArticle(p.type)} given by another provider's file id was not sent to Anthropic.`);
      return null;
    case "text":
      if (!image) return { type: "text", media_type: s.mediaType || "text/plain", data: s.data };
      w.add("dropped_content", "An image with a text source cannot be sent to Anthropic and was dropped");
      return null;
  }
}
