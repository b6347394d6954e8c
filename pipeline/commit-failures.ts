/**
 * The failures the commit point (pipeline/commit.ts, SPEC R-8, 6.3, 6.4) gives an attempt whose upstream
 * answered 2xx but whose reply does not commit: the gateway's own failure, an upstream that went silent
 * or sent no content in time, and a 200 the gateway cannot use (nothing usable in it, or nothing it can
 * read at all: not JSON, not the format's shape, an HTML page, no body, a stream that ended before its
 * first byte), which SPEC 6.3's last row sends to the next target with no account effect.
 */
import { hubError, type HubError } from "../formats/hub.ts";
import { TRUNCATED_ERROR } from "../formats/normalize.ts";
import type { AttemptFailure, CommitAttempt } from "./commit-out.ts";
import type { ReplyDriver } from "./reply-driver.ts";
import { SERVER_TOOL_IDLE_FACTOR } from "./keep-alive-bound.ts";
import { scrubText } from "./scrub.ts";

/**
 * The failure of an attempt whose reply driver threw before the commit point (a decoder or encoder
 * that failed on a reply it did not expect): the gateway's own error, not the upstream's (SPEC 6.3 has
 * no row for it; classify.ts `gateway_error`): a 500 `api_error` in the client's format, without the
 * exception's text (no stack, nothing internal reaches the client), returned at once without touching
 * the account's health. The route trace's attempt says it was the gateway and names the exception.
 */
export function gatewayFailed(a: CommitAttempt, e: unknown): AttemptFailure {
  const provider = a.target.provider.id;
  const failure = a.fail({ gateway: true, status: a.reply.status }, hubError("api_error", `The gateway failed while reading the reply of upstream ${provider}.`, { status: 500, code: "gateway_error" }));
  const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  a.trace.error = a.traceText(`The gateway failed while reading the reply of upstream ${provider} (its own error, not the upstream's: ${what})`);
  return failure;
}

/**
 * SPEC 6.3's empty reply from a whole reply (no text, tool call, reasoning or finish reason): 502,
 * code `upstream_empty_reply` as a streamed one's (formats/openai-chat/decoder.ts EMPTY_REPLY_ERROR),
 * classified as the empty reply row (the next target, no cooldown, no same-account retry).
 */
export function emptyReplyError(providerId: string): HubError {
  return hubError("api_error", `Upstream ${providerId} answered with nothing usable: no content and no finish reason.`, { status: 502, code: "upstream_empty_reply" });
}

/**
 * The failure of an upstream that went silent before its first content (the peek's idle timeout).
 * `pingedMs`: a gathered reply that held nothing while events without content kept arriving, for
 * that long (the idle timeout, or SERVER_TOOL_IDLE_FACTOR times it while `serverTool`: a server tool
 * was in flight): the message says so.
 */
export function wentSilent(a: CommitAttempt, providerId: string, pingedMs?: number, serverTool = false): AttemptFailure {
  const message =
    pingedMs === undefined
      ? `Upstream ${providerId} went silent before answering.`
      : `Upstream ${providerId} sent only events without content (keep-alive pings) for ${pingedMs / 1000} s${serverTool ? " while a server tool was at work" : ""}.`;
  return a.fail({ transport: "header_timeout", status: 504 }, hubError("timeout", message, { status: 504 }));
}

/**
 * {@link wentSilent} for the peek's idle timeout after `contentless` bytes without content; a server
 * tool's pings last refreshed it `keptMs` after the last progress: at 2 idle timeouts or more, the
 * longer bound (SERVER_TOOL_IDLE_FACTOR idle timeouts) ran out, and the failure says so.
 */
export function gatheredSilent(a: CommitAttempt, providerId: string, driver: ReplyDriver<unknown>, idleMs: number, contentless: number, keptMs: number): AttemptFailure {
  if (driver.serverToolRunning === true && keptMs >= (SERVER_TOOL_IDLE_FACTOR - 1) * idleMs) return wentSilent(a, providerId, idleMs * SERVER_TOOL_IDLE_FACTOR, true);
  return wentSilent(a, providerId, contentless > 0 ? idleMs : undefined);
}

/**
 * The failure of a streamed reply that brought no content within the provider's first-content timeout
 * (`ms`) of its headers, only events without any (keep-alive pings, a `message_start`), or, when
 * `inBlock`, within `ms` of the start of a block it began (a thinking block with no thinking): a
 * timeout (504, SPEC 6.3's timeout row), so the attempt loop retries or moves on within the pre-commit
 * deadline (6.1), and the client gets it in its own format when nothing else serves.
 */
export function noContentInTime(a: CommitAttempt, providerId: string, ms: number, inBlock: boolean): AttemptFailure {
  const message = inBlock
    ? `Upstream ${providerId} started a block but sent nothing of it within ${ms / 1000} s, only events without content (keep-alive pings); its first_content_timeout_ms is ${ms}.`
    : `Upstream ${providerId} sent no content within ${ms / 1000} s of its headers, only events without any (keep-alive pings); its first_content_timeout_ms is ${ms}.`;
  return a.fail({ transport: "header_timeout", status: 504 }, hubError("timeout", message, { status: 504 }));
}

/**
 * The codes of a 200 whose reply the gateway cannot read at all: not JSON (an HTML page included), not
 * the format's shape, a stream event it cannot parse (set by the decoders, formats/…/response.ts and
 * decoder.ts, and pipeline/whole-reply-bound.ts notJsonError).
 */
const UNREADABLE_CODES: ReadonlySet<string | undefined> = new Set(["upstream_invalid_json", "upstream_invalid_body", "upstream_malformed"]);

/**
 * Whether `e`, the error a 2xx reply failed with before its first content, says the reply was unusable
 * (SPEC 6.3's last row: no same-account retry, no cooldown, no count toward the provider's circuit, the
 * next target) rather than carrying an error of the upstream's (an in-band error keeps its own row) or
 * breaking (a stream that ended after an event but before its finish keeps the 5xx row, as a whole JSON
 * body cut mid-way does: whole-reply-bound.ts notJsonError). `nothingRead`: the stream ended before its
 * first event (no byte, or only SSE comments: {@link SSE_EVENT_SEEN}), like `data: [DONE]` alone.
 */
export function unusableReply(e: HubError, nothingRead: boolean): boolean {
  return UNREADABLE_CODES.has(e.code) || (nothingRead && e.code === TRUNCATED_ERROR.code);
}

/**
 * The client's error for an unusable 2xx reply ({@link unusableReply}): `e` with its message naming the
 * provider, the status and the reply's Content-Type (an HTML login page says `text/html`), scrubbed of the
 * attempt's secrets as an upstream error's text is (a page's title may echo anything).
 */
export function unusableReplyError(a: CommitAttempt, e: HubError, status: number, contentType: string | null): HubError {
  // A stream that ended before its first event (no byte, or only comments) was not cut: it had nothing in it.
  if (e.code === TRUNCATED_ERROR.code) e = { ...e, message: "The upstream stream ended before sending any event.", code: "upstream_empty_reply" };
  const type = contentType === null || contentType.trim() === "" ? "no Content-Type" : `Content-Type ${contentType.slice(0, 100)}`;
  const message = scrubText(`Upstream ${a.target.provider.id} answered HTTP ${status} (${type}) with a reply the gateway cannot use: ${e.message}`, a.secrets());
  return { ...e, message, status: 502 };
}

/** {@link sseScan}'s state once a line that is no SSE comment (an event's field, or bytes of another kind) was read. */
export const SSE_EVENT_SEEN = 2;

/**
 * The commit point's scan of a streamed reply's first reads for whether it carried an event at all
 * (WHATWG HTML §9.2.6 "Interpreting an event stream": a line starting with ":" is a comment, an empty
 * line ends an event, a leading U+FEFF BOM is skipped): `state` 0 at a line's start, 1 inside a comment
 * line, {@link SSE_EVENT_SEEN} once a line of anything else began, and the state after `chunk`. `first`:
 * `chunk` is the stream's first. A usual stream's first byte settles it; the caller stops asking then.
 */
export function sseScan(state: number, chunk: Uint8Array, first: boolean): number {
  let i = first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  for (; i < chunk.length; i++) {
    const b = chunk[i]!;
    if (b === 0x0a || b === 0x0d) state = 0;
    else if (state === 0) {
      if (b !== 0x3a) return SSE_EVENT_SEEN;
      state = 1;
    }
  }
  return state;
}
