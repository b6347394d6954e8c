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
import { doneLineAt, lastChunkHead, usageChunk, type ChunkHead } from "../formats/openai-chat/usage-chunk.ts";
import { defaultChatId } from "../formats/openai-chat/encoder.ts";
import { estimateReplyUsage, type UsageEstimates } from "./estimate-reply-usage.ts";

const utf8 = new TextEncoder();

/** Adds the usage chunk to a native Chat stream's output (see the module's comment); one per reply. */
export class UsageChunkAdder {
  /** The stream's last chunk with an id so far (its head, copied), as found in the outputs before the last. */
  private head: ChunkHead | undefined;
  /** `[DONE]` (or the end) was reached: nothing more to add. */
  private settled = false;

  /** `estimates`: where the input estimate is read (the request's). */
  constructor(private readonly estimates: UsageEstimates) {}

  /**
   * The tap's output `out` (whole events), with the usage chunk put before its `data: [DONE]` line
   * when the reply finished (`state.stopReason`, no `state.error`) without a usage object
   * (`state.usageSeen`) and `[DONE]` is in it (read by the tap: `state.terminal`; or `ended`, the
   * tap's `end` output, which appends it). The chunk's `id`, `created`, `model` and
   * `system_fingerprint` are the last chunk's with a non-empty id before `[DONE]`, however the reads
   * fell (the openai SDK's `ChatCompletionStream` copies them from each chunk with an id, the last
   * winning): looked for in each output before the last
   * (formats/openai-chat/usage-chunk.ts `lastChunkHead`: a byte search from the output's end, a parse
   * only of a line whose id, `created`, `model` or `system_fingerprint` is not the one known; nothing of
   * an output is kept), and in the last only
   * when the chunk is added. When no chunk had one the chunk gets a new `chatcmpl-` id (as a translated
   * Chat stream's) and no `created` or `model`: the openai SDK's `ChatCompletionStream` keeps a
   * chunk's `usage` only from a chunk with an id.
   * `outputChars`: the characters of content forwarded, for the output estimate (asked only then).
   */
  add(out: Uint8Array, state: TapState, ended: boolean, outputChars: () => number): Uint8Array {
    if (this.settled || out.byteLength === 0) return out;
    if (!state.terminal && !ended) {
      // A reply read whole in one output (the usual short one) is looked at below, only when the chunk is added.
      this.head = lastChunkHead(out, this.head) ?? this.head;
      return out;
    }
    this.settled = true;
    if (state.stopReason === null || state.error !== undefined || state.usageSeen) return out;
    const at = doneLineAt(out);
    if (at < 0) return out;
    const head = lastChunkHead(out.subarray(0, at), this.head) ?? this.head ?? { id: defaultChatId() };
    const chunk = utf8.encode(usageChunk(head, estimateReplyUsage(this.estimates, outputChars())));
    return concatBytes([out.subarray(0, at), chunk, out.subarray(at)]);
  }
}
