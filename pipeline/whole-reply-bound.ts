/**
 * The bound on a non-streamed upstream reply (JSON) that the whole-body driver holds before it is parsed
 * (pipeline/re-translate.ts WholeBodyDriver), and the failure past it.
 */
import { FormatError, hubError } from "../formats/hub.ts";

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
