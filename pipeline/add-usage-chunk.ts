/**
 * The usage chunk a native Chat stream's client asked for (`stream_options.include_usage: true`) when
 * the upstream sent none (a server that ignores `stream_options`): before `data: [DONE]`, as OpenAI
 * sends it, a chunk with `choices: []` and the gateway's estimate (pipeline/estimate-reply-usage.ts:
 * the figures the request's usage row records, marked estimated), as a translated Chat stream gets it.
 * Used by the passthrough driver (pipeline/passthrough-driver.ts) of the native pair Chat → Chat only
 * for such a client (pipeline/commit.ts); a stream that had usage, failed (an in-band error) or never
 * finished goes on byte for byte.
 */
import type { TapState } from "../formats/codec.ts";
import { concatBytes } from "../formats/sse.ts";
import { doneLineAt, firstChunkLine, usageChunk } from "../formats/openai-chat/usage-chunk.ts";
import { estimateReplyUsage, type UsageEstimates } from "./estimate-reply-usage.ts";

/** Longest first chunk line kept for the usage chunk's `id`, `created` and `model`, in bytes. */
const FIRST_LINE_BYTES = 16 * 1024;
const utf8 = new TextEncoder();
const text = new TextDecoder();

/** Adds the usage chunk to a native Chat stream's output (see the module's comment); one per reply. */
export class UsageChunkAdder {
  /** The first output's first data line (a copy), once output began and more was to come; null when none was found there. */
  private first: Uint8Array | null | undefined;
  /** `[DONE]` (or the end) was reached: nothing more to add. */
  private settled = false;

  /** `estimates`: where the input estimate is read (the request's). */
  constructor(private readonly estimates: UsageEstimates) {}

  /**
   * The tap's output `out` (whole events), with the usage chunk put before its `data: [DONE]` line
   * when the reply finished (`state.stopReason`, no `state.error`) without usage and `[DONE]` is in it
   * (read by the tap: `state.terminal`; or `ended`, the tap's `end` output, which appends it).
   * `outputChars`: the characters of content forwarded, for the output estimate (asked only then).
   */
  add(out: Uint8Array, state: TapState, ended: boolean, outputChars: () => number): Uint8Array {
    if (this.settled || out.byteLength === 0) return out;
    const last = state.terminal || ended;
    // Copied only when more output follows: a reply read whole in one output (the usual short one) reads it from `out` below.
    if (this.first === undefined && !last) this.first = firstChunkLine(out, FIRST_LINE_BYTES)?.slice() ?? null;
    if (!last) return out;
    this.settled = true;
    const u = state.usage;
    if (state.stopReason === null || state.error !== undefined || u.inputTokens !== undefined || u.outputTokens !== undefined) return out;
    const at = doneLineAt(out);
    if (at < 0) return out;
    const first = this.first === undefined ? firstChunkLine(out, FIRST_LINE_BYTES) : this.first;
    const chunk = utf8.encode(usageChunk(first ? text.decode(first) : undefined, estimateReplyUsage(this.estimates, outputChars())));
    return concatBytes([out.subarray(0, at), chunk, out.subarray(at)]);
  }
}
