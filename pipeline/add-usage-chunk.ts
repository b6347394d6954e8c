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
import { chunkHead, doneLineAt, usageChunk, type ChunkHead } from "../formats/openai-chat/usage-chunk.ts";
import { defaultChatId } from "../formats/openai-chat/encoder.ts";
import { estimateReplyUsage, type UsageEstimates } from "./estimate-reply-usage.ts";

const utf8 = new TextEncoder();

/** Adds the usage chunk to a native Chat stream's output (see the module's comment); one per reply. */
export class UsageChunkAdder {
  /** The stream's first chunk with an id (its head, copied), once found in an output before the last. */
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
   * `system_fingerprint` are the first chunk's with a non-empty id wherever it comes, however the
   * reads fell: looked for in each output before the last until found (formats/openai-chat/usage-chunk.ts
   * `chunkHead`: a byte search, a parse only of the line found; nothing of an output is kept), and in
   * the last only when the chunk is added. When no chunk had one the chunk gets a new `chatcmpl-` id
   * (as a translated Chat stream's) and no `created` or `model`: the openai SDK's
   * `ChatCompletionStream` keeps a chunk's `usage` only from a chunk with an id.
   * `outputChars`: the characters of content forwarded, for the output estimate (asked only then).
   */
  add(out: Uint8Array, state: TapState, ended: boolean, outputChars: () => number): Uint8Array {
    if (this.settled || out.byteLength === 0) return out;
    if (!state.terminal && !ended) {
      // A reply read whole in one output (the usual short one) is looked at below, only when the chunk is added.
      if (this.head === undefined) this.head = chunkHead(out);
      return out;
    }
    this.settled = true;
    if (state.stopReason === null || state.error !== undefined || state.usageSeen) return out;
    const at = doneLineAt(out);
    if (at < 0) return out;
    const head = this.head ?? chunkHead(out) ?? { id: defaultChatId() };
    const chunk = utf8.encode(usageChunk(head, estimateReplyUsage(this.estimates, outputChars())));
    return concatBytes([out.subarray(0, at), chunk, out.subarray(at)]);
  }
}
