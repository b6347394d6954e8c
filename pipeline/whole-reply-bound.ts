/**
 * The bounds on a reply held whole before it is sent: a non-streamed upstream reply (JSON) that the
 * whole-body driver holds before it is parsed (pipeline/re-translate.ts WholeBodyDriver), a streamed
 * upstream reply gathered for a non-streaming client (AccumulatedDriver), and the failures past them.
 */
import { FormatError, hubError, type HubEvent } from "../formats/hub.ts";

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
