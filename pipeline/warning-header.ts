/**
 * The `X-Switchyard-Warning` response header (SPEC 2.4): a request's warnings as a JSON array, bounded.
 *
 * A warning may quote what the client sent (a dropped field's name, a reasoning effort that is no
 * level), and a client can send 40 KB of it. Unbounded, the header made Node's HTTP client (undici,
 * under the OpenAI and Anthropic SDKs and `fetch` on Node) give up on the whole reply with
 * `UND_ERR_HEADERS_OVERFLOW` (its limit: 16 KiB for all of a response's headers): a served reply lost
 * over a warning. So each warning's text is cut to {@link WARNING_TEXT_MAX} characters (with "…"), and
 * the header to {@link WARNING_HEADER_MAX} bytes, the warnings that do not fit replaced by one
 * `warnings_omitted` warning saying how many. The route trace keeps every warning whole
 * (`switchyard calls inspect ROUTE_ID`).
 */

/** At most this many characters of a warning's `message` (or `code`) reach the header. */
export const WARNING_TEXT_MAX = 512;

/** At most this many bytes of header value (half of undici's 16 KiB for all headers). */
export const WARNING_HEADER_MAX = 8192;

/** `Warning.code` of the note that stands for warnings that did not fit in the header. */
export const WARNINGS_OMITTED = "warnings_omitted";

/** Room kept for the {@link WARNINGS_OMITTED} note: its JSON is well under this. */
const NOTE_ROOM = 200;

/**
 * The header's value: the warnings as a JSON array, every character outside printable ASCII written as
 * a JSON `\uXXXX` escape (a header value is bytes: Bun's `Headers.set` throws on a character above
 * U+00FF, and Latin-1 above U+007F reads differently per client), so `JSON.parse` gives the same
 * texts back and a warning never turns a served reply into a 500. At most {@link WARNING_HEADER_MAX}
 * bytes (see the module comment). Undefined when there is none.
 */
export function warningHeader(warnings: readonly { code: string; message: string }[]): string | undefined {
  if (warnings.length === 0) return undefined;
  const json = asciiJson(warnings);
  return json.length <= WARNING_HEADER_MAX ? json : boundedHeader(warnings);
}

/** The warnings with long texts cut, as many as fit, then the note for the rest. */
function boundedHeader(warnings: readonly { code: string; message: string }[]): string {
  const pieces: string[] = [];
  let size = 2; // the brackets
  let kept = 0;
  for (const w of warnings) {
    const piece = asciiJson({ code: cut(w.code), message: cut(w.message) });
    if (size + piece.length + 1 + NOTE_ROOM > WARNING_HEADER_MAX) break;
    pieces.push(piece);
    size += piece.length + 1;
    kept++;
  }
  const omitted = warnings.length - kept;
  if (omitted > 0) {
    pieces.push(asciiJson({ code: WARNINGS_OMITTED, message: `${omitted} more warning(s) did not fit in this header; the route trace (X-Switchyard-Route-Id) has them all.` }));
  }
  return `[${pieces.join(",")}]`;
}

/** `text` cut to {@link WARNING_TEXT_MAX} characters and "…", never between the halves of a surrogate pair. */
function cut(text: string): string {
  if (text.length <= WARNING_TEXT_MAX) return text;
  let end = WARNING_TEXT_MAX;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** `JSON.stringify(value)` with every character outside printable ASCII as a `\uXXXX` escape. */
function asciiJson(value: unknown): string {
  const json = JSON.stringify(value);
  return /[^\x20-\x7e]/.test(json) ? json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) : json;
}
