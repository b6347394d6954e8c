/**
 * The bounds on a reply held whole before it is sent: a non-streamed upstream reply (JSON) that the
 * whole-body driver holds before it is parsed (pipeline/re-translate.ts WholeBodyDriver), a streamed
 * upstream reply gathered for a non-streaming client (AccumulatedDriver), and the failures past them.
 */
import { FormatError, hubError, type HubError, type HubEvent } from "../formats/hub.ts";
import { TRUNCATED_ERROR } from "../formats/normalize.ts";
import { DEPTH_CHECKED_BYTES, nestsDeeperThan, upstreamNestedTooDeep } from "../formats/json-depth.ts";

/**
 * The most the gateway holds of one non-streamed upstream reply (JSON), in bytes: 64 MiB, the bound of
 * one SSE event (formats/sse.ts MAX_SSE_EVENT_BYTES), which is the same thing, a piece that must be held
 * whole to be read. The largest real JSON replies carry base64 images (a few MB each; a 4096x4096
 * PNG can reach tens of MB), under it; a reply at the bound already costs a few hundred MB while it is
 * decoded (the bytes, the UTF-16 string, the parsed reply and its re-encoding), and a base URL serving
 * an endless body would otherwise be read until the pre-commit deadline (60 s, gigabytes on loopback).
 */
export const MAX_WHOLE_REPLY_BYTES = 64 * 1024 * 1024;

/**
 * Whole replies longer than this (bytes) are checked for nesting past MAX_JSON_DEPTH before they are
 * parsed ({@link nestsTooDeepToParse}). `JSON.parse` holds the event loop for every level it opens:
 * 33.5 million nested arrays (a 64 MiB reply) cost 6.8 s of CPU in it and the driver, against 0.17 s
 * for a 64 MiB string and 1.4 s for 33.5 million numbers side by side (Bun 1.4.5, 2026-12-03, load
 * 24), ~0.2 µs per level. A reply of at most 1 MiB nests at most 524,288 levels (~0.1 s to parse), and
 * the usual reply, far shorter, pays only a length compare; a shorter one that nests deep is read as
 * before (formats/json-depth.ts: refused where a value would be serialised again, else relayed).
 */
export const DEPTH_CHECKED_REPLY_BYTES = DEPTH_CHECKED_BYTES;

/**
 * Whether a whole reply's bytes must be refused before `JSON.parse` for nesting more than
 * MAX_JSON_DEPTH levels (formats/json-depth.ts; no real reply nests anywhere near it): checked only
 * past {@link DEPTH_CHECKED_REPLY_BYTES}, where it costs a native search per bracket up to 1,001 of
 * them, then ~1 ns per byte (~60 ms at 64 MiB, against the 170 ms its plainest parse costs).
 */
export function nestsTooDeepToParse(bytes: Uint8Array): boolean {
  return bytes.length > DEPTH_CHECKED_REPLY_BYTES && nestsDeeperThan(bytes);
}

/** The failure of a whole reply {@link nestsTooDeepToParse} refuses (502 `upstream_nested_too_deep`), else undefined. */
export function tooDeepToParse(bytes: Uint8Array): HubError | undefined {
  return nestsTooDeepToParse(bytes) ? upstreamNestedTooDeep("a reply") : undefined;
}

/**
 * The failure of a non-streamed upstream reply past `limit` bytes (502, `upstream_reply_too_large`), as
 * the FormatError the whole-body driver's `push` throws: before the commit point (a whole reply is read to
 * its end before anything is sent) a failed attempt, retried or moved on from like a broken reply.
 */
export function replyTooLarge(limit: number = MAX_WHOLE_REPLY_BYTES): FormatError {
  return new FormatError(
    hubError("api_error", `The upstream sent a reply larger than ${limit} bytes; the gateway does not hold a non-streamed reply larger than that.`, {
      status: 502,
      code: "upstream_reply_too_large",
    }),
  );
}

/**
 * The characters a canonical event adds to a gathered reply: text, reasoning and tool-call arguments
 * of a delta, the data of a redacted reasoning block. The bound of a reply gathered from a stream for a
 * non-streaming client (SPEC F-9) is on these, at {@link MAX_WHOLE_REPLY_BYTES} characters, and not on
 * the stream's SSE bytes: what the driver holds is the reply it builds (each event is decoded, folded
 * and dropped), which is what the JSON reply the client gets is made of; a JSON reply of 64 MiB holds
 * at most 64 Mi characters of content, so a reply that the same provider could have sent as JSON also
 * passes as a stream. The SSE bytes are no measure of it: their framing is 10–60 times the content
 * (a Chat chunk of ~200 bytes per token), so a long real reply (a 128k-token answer is ~0.5 MB of text)
 * reaches tens of MB of SSE, and a byte bound loose enough for the wordiest framing would let the
 * densest (Anthropic's, a few tokens per event) hold several times more. Each event is bounded on its
 * own (MAX_SSE_EVENT_BYTES); events that add nothing (pings) hold nothing.
 */
export function gatheredChars(ev: HubEvent & { type: "block_delta" | "block_start" }): number {
  if (ev.type === "block_start") return ev.block.type === "redacted_thinking" ? ev.block.data.value.length : 0;
  const d = ev.delta;
  return d.type === "text" || d.type === "thinking" ? d.text.length : d.type === "tool_args" ? d.json.length : 0;
}

/**
 * The failure of a streamed upstream reply gathered for a non-streaming client past `limit` characters
 * of content ({@link gatheredChars}): 502 `upstream_reply_too_large`, like {@link replyTooLarge}. The
 * whole reply is gathered before the commit point, so it is a failed attempt, retried or moved on from.
 */
export function gatheredReplyTooLarge(limit: number = MAX_WHOLE_REPLY_BYTES): FormatError {
  return new FormatError(
    hubError("api_error", `The upstream sent a streamed reply with more than ${limit} characters of content; the gateway does not gather a larger reply for a request that did not ask for a stream.`, {
      status: 502,
      code: "upstream_reply_too_large",
    }),
  );
}

/** Characters of an HTML page's title that {@link notJsonError} names. */
const TITLE_CHARS = 80;
/** Bytes of a reply that is not JSON read to tell an HTML page and find its title. */
const HEAD_BYTES = 8192;

/**
 * The error of a whole reply that is not JSON (pipeline/re-translate.ts WholeBodyDriver), code
 * `upstream_invalid_json`: an HTML page (a proxy's login page, a web server's error page answered with
 * 200) is said to be one, with the first {@link TITLE_CHARS} characters of its `<title>` when it has one.
 */
export function notJsonError(bytes: Uint8Array): HubError {
  const head = new TextDecoder().decode(bytes.subarray(0, HEAD_BYTES)).replace(/^\uFEFF/, "").trimStart();
  // A JSON body cut off mid-way (a close-delimited body whose connection closed early: HTTP/1.1 §6.3
  // cannot tell it from a finished one) is a cut reply, as a cut stream is (SPEC 6.3's 5xx row, retried
  // on the same account), not an unusable one. Asked only here, after the parse failed.
  if ((head.startsWith("{") || head.startsWith("[")) && isCutJson(new TextDecoder().decode(bytes).replace(/^\uFEFF/, ""))) {
    return hubError("api_error", "The upstream reply ended before it was complete: its JSON body stops mid-way.", { status: 502, code: TRUNCATED_ERROR.code });
  }
  let message = "The upstream reply was not valid JSON.";
  if (head.startsWith("<") && /<(?:!doctype\s+html|html|head|body|title)\b/i.test(head)) {
    const m = /<title[^>]*>([\s\S]*?)<\/title/i.exec(head);
    const title = m ? htmlText(m[1]!) : "";
    const cut = title.length > TITLE_CHARS ? `${title.slice(0, TITLE_CHARS)}…` : title;
    message = cut ? `The upstream reply is an HTML page, not JSON (its title: "${cut}").` : "The upstream reply is an HTML page, not JSON.";
  }
  return hubError("api_error", message, { status: 502, code: "upstream_invalid_json" });
}

/** An HTML text's characters: the common entities read, whitespace runs made one space. */
function htmlText(html: string): string {
  return html
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, n: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", apos: "'", nbsp: " " })[n] ?? "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The proper prefixes of an RFC 8259 §6 number (`-? int frac? exp?`, int `0` or `[1-9][0-9]*`, frac
 * `.` and one digit or more, exp `e`/`E`, a sign maybe, one digit or more) and the numbers themselves:
 * what more digits could still make a number. `-`, `1.`, `1e`, `1.5e+` are; `1.e` (a fraction with no
 * digit before the exponent), `01`, `-.5` are not, whatever follows.
 */
const NUMBER_PREFIX = /^-?(?:(?:0|[1-9]\d*)(?:\.\d*|(?:\.\d+)?[eE][-+]?\d*)?)?$/;

/** What the JSON scanner of {@link isCutJson} expects next. */
const Next = { Value: 0, ValueOrClose: 1, Key: 2, KeyOrClose: 3, Colon: 4, After: 5 } as const;

/**
 * Whether `text` (a failed JSON.parse's input) is a proper prefix of a JSON text (RFC 8259): valid as
 * far as it goes and ended inside a value (an open object or array, string, number or literal), so it
 * failed only because it ended. Garbage, a complete value with something after it, or an empty text:
 * false. One pass, no values built; called only on the failure path.
 */
export function isCutJson(text: string): boolean {
  const stack: number[] = []; // 0: object, 1: array
  let next: number = Next.Value;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      i++;
      continue;
    }
    if (next === Next.Colon) {
      if (c !== 0x3a) return false;
      next = Next.Value;
      i++;
    } else if (next === Next.After) {
      if (stack.length === 0) return false; // a complete value and more after it
      const top = stack[stack.length - 1];
      if (c === 0x2c) next = top === 0 ? Next.Key : Next.Value;
      else if (c === (top === 0 ? 0x7d : 0x5d)) stack.pop();
      else return false;
      i++;
    } else if (c === 0x7d && next === Next.KeyOrClose) {
      stack.pop();
      next = Next.After;
      i++;
    } else if (c === 0x5d && next === Next.ValueOrClose) {
      stack.pop();
      next = Next.After;
      i++;
    } else if (c === 0x22) {
      // a string (a key or a value): its end, or the text ended inside it
      i++;
      while (i < n && text.charCodeAt(i) !== 0x22) {
        const d = text.charCodeAt(i);
        if (d < 0x20) return false;
        if (d === 0x5c) {
          // an escape (RFC 8259 §7): a quote, backslash, slash or one of b f n r t, or u and four hex
          // digits, each as far as the text goes (a backslash and x can never become valid: not a cut)
          const e = text[i + 1];
          if (e === undefined) return true;
          if (e === "u") {
            const hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]*$/.test(hex)) return false;
            i += 2 + hex.length;
          } else if ('"\\/bfnrt'.includes(e)) i += 2;
          else return false;
        } else i++;
      }
      if (i >= n) return true;
      i++;
      next = next === Next.Key || next === Next.KeyOrClose ? Next.Colon : Next.After;
    } else if (next === Next.Key || next === Next.KeyOrClose) {
      return false;
    } else if (c === 0x7b || c === 0x5b) {
      stack.push(c === 0x7b ? 0 : 1);
      next = c === 0x7b ? Next.KeyOrClose : Next.ValueOrClose;
      i++;
    } else {
      // a number or a literal: the run of its characters, whole or cut at the end of the text
      let j = i;
      while (j < n && /[-+.0-9a-zA-Z]/.test(text[j]!)) j++;
      const token = text.slice(i, j);
      if (j >= n) return NUMBER_PREFIX.test(token) || ["true", "false", "null"].some((w) => w.startsWith(token));
      if (!/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/.test(token) && token !== "true" && token !== "false" && token !== "null") return false;
      i = j;
      next = Next.After;
    }
  }
  return stack.length > 0 || next === Next.Colon;
}
