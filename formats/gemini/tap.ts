/**
 * Native passthrough observer for Gemini (FormatCodec.createTap, SPEC F-3). There is no Gemini client
 * endpoint yet, so no native Gemini pair exists; this is the minimal correct tap for when one does:
 *
 * - the upstream bytes are forwarded unchanged (the same Uint8Array is returned);
 * - usage (last `usageMetadata` with counts, mapped as in mapping.ts), content, the finish reason and
 *   an in-band `{"error": …}` are observed from the SSE payloads;
 * - Gemini has no terminal event: the chunk with `finishReason` (or a prompt `blockReason`) is the
 *   end, so `terminal` is set by it;
 * - `end(failure?)`: when a finish or an upstream error was seen, only what closes the last event if
 *   the upstream stopped before its blank line (Gemini has no closing frames; SPEC 6.4 "only the
 *   missing closing frames are added"); otherwise one in-band error chunk `data: {"error": {…}}` (the
 *   `failure`, or the truncation error), preceded by whatever ends a partial line or pending event so
 *   the error is an event of its own.
 */
import type { PassthroughTap, TapOptions, TapState } from "../codec.ts";
import { mergeUsage, type HubError } from "../hub.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { SseReader, sseData } from "../sse.ts";
import { errorBody, errorFromStatus } from "./errors.ts";
import { mapFinishReason, mapUsage } from "./mapping.ts";
import { isObj } from "../json.ts";

const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

/**
 * Creates a tap (FormatCodec.createTap). `push` returns the very chunk it was given; `end` returns the
 * bytes to append (possibly empty). Never throws.
 */
export function createTap(_opts: TapOptions): PassthroughTap {
  const state: TapState = { usage: {}, sawContent: false, stopReason: null, terminal: false };
  let done = false;
  // Line state of the forwarded bytes, as the client's SSE parser sees them (REFERENCE §0): whether
  // the current line has characters, whether a non-blank line awaits its dispatching blank line, and
  // whether the last byte was a CR (a following LF belongs to it).
  let lineHasChars = false;
  let eventPending = false;
  let lastCR = false;

  const onPayload = (data: string) => {
    if (state.error || data.length === 0 || data === "[DONE]") return;
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      return; // passthrough: the client sees the bytes as they are
    }
    if (!isObj(obj)) return;
    if (isObj(obj.error)) {
      state.error = errorFromStatus(obj.error, 0);
      return;
    }
    const u = mapUsage(obj.usageMetadata);
    if (u) mergeUsage(state.usage, u);
    const cands = obj.candidates;
    if (Array.isArray(cands) && cands.length > 0) {
      const c = cands.find((x) => isObj(x) && (typeof x.index === "number" ? x.index : 0) === 0);
      if (isObj(c)) {
        const parts = isObj(c.content) ? c.content.parts : undefined;
        if (!state.sawContent && Array.isArray(parts)) {
          for (const p of parts) {
            if (!isObj(p)) continue;
            if ((typeof p.text === "string" && p.text.length > 0) || isObj(p.functionCall)) {
              state.sawContent = true;
              break;
            }
          }
        }
        if (typeof c.finishReason === "string" && c.finishReason.length > 0 && state.stopReason === null) {
          state.stopReason = mapFinishReason(c.finishReason);
          state.terminal = true;
          state.sawContent = true;
        }
      }
    } else if (isObj(obj.promptFeedback) && typeof obj.promptFeedback.blockReason === "string" && state.stopReason === null) {
      state.stopReason = "refusal";
      state.terminal = true;
      state.sawContent = true;
    }
  };

  const reader = new SseReader((ev) => onPayload(ev.data));

  return {
    state,
    push(chunk: Uint8Array): Uint8Array {
      if (done) return EMPTY;
      if (chunk.length === 0) return chunk;
      reader.push(chunk);
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        if (b === 10 || b === 13) {
          if (b === 10 && lastCR) {
            lastCR = false;
            continue;
          }
          lastCR = b === 13;
          if (lineHasChars) {
            eventPending = true;
            lineHasChars = false;
          } else {
            eventPending = false;
          }
        } else {
          lastCR = false;
          lineHasChars = true;
        }
      }
      return chunk;
    },
    end(failure?: HubError): Uint8Array {
      if (done) return EMPTY;
      done = true;
      // Dispatches a last event that lacked its blank line (SseReader.end()).
      reader.end();
      // A partial last line or an event still waiting for its blank line: end it, so the client's
      // parser dispatches it (or, before our error, so the error is an event of its own).
      const prefix = lineHasChars ? "\n\n" : eventPending ? "\n" : "";
      if (state.stopReason !== null || state.error) return prefix.length > 0 ? utf8.encode(prefix) : EMPTY;
      const err = failure ?? TRUNCATED_ERROR;
      state.error = err; // the client gets an in-band error: the reply failed (SPEC 6.4)
      return utf8.encode(prefix + sseData(JSON.stringify(errorBody(err))));
    },
  };
}
