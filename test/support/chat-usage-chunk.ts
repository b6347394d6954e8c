/**
 * The native Chat stream's driver with the usage chunk adder on (pipeline/add-usage-chunk.ts), as the
 * gateway runs it for a Chat client that asked for `include_usage` (an input estimate of 3 tokens):
 * test/pipeline/add-usage-chunk*.test.ts.
 */
import { codecFor } from "../../formats/index.ts";
import type { PassthroughTap } from "../../formats/codec.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import { UsageChunkAdder } from "../../pipeline/add-usage-chunk.ts";
import { byteSample } from "../../pipeline/output-estimate.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * The client's bytes for the upstream stream `sse` read in pieces ending at the byte offsets `cuts`
 * (ascending; the last piece ends at the stream's end), ended cleanly or, with `failure`, by an
 * upstream 502 after the last piece.
 */
export function runWithUsageChunk(sse: string, cuts: number[] = [], failure = false): string {
  const codec = codecFor("openai-chat");
  const d = passthroughDriver(codec.createTap({ family: "openai", includeUsage: true }) as PassthroughTap, byteSample(codec, { family: "openai" }), undefined, new UsageChunkAdder({ estimatedInputTokens: () => 3 }));
  const bytes = enc.encode(sse);
  let out = "";
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    out += dec.decode(d.push(bytes.subarray(from, c)));
    from = c;
  }
  return out + dec.decode(failure ? d.end({ kind: "api_error", status: 502, message: "broke" }) : d.end());
}
