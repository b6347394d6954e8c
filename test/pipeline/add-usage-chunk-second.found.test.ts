/**
 * Found in review (2026-12-07): pipeline/add-usage-chunk.ts decides "the upstream sent no usage" from
 * the tap's parsed figures (input or output tokens), not from whether a usage chunk came. An upstream
 * usage-only chunk that carries a usage object without prompt/completion counts (here only
 * `total_tokens`) is forwarded AND a second, estimated usage chunk is added: the client that asked
 * `include_usage` gets two `choices: []` usage chunks, where OpenAI sends one and the module says a
 * stream that had its usage chunk goes on byte for byte.
 */
import { expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { PassthroughTap } from "../../formats/codec.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import { UsageChunkAdder } from "../../pipeline/add-usage-chunk.ts";
import { byteSample } from "../../pipeline/output-estimate.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const chunk = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", choices, ...extra })}\n\n`;

test("an upstream usage chunk with only total_tokens: passed through as it came, no second usage chunk", () => {
  const codec = codecFor("openai-chat");
  const d = passthroughDriver(codec.createTap({ family: "openai", includeUsage: true }) as PassthroughTap, byteSample(codec, { family: "openai" }), undefined, new UsageChunkAdder({ estimatedInputTokens: () => 3 }));
  const sse =
    chunk([{ index: 0, delta: { role: "assistant", content: "Hello" }, finish_reason: null }]) +
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]) +
    chunk([], { usage: { total_tokens: 11 } }) +
    "data: [DONE]\n\n";
  const out = dec.decode(d.push(enc.encode(sse))) + dec.decode(d.end());
  expect(out.match(/"choices":\[\],"usage"/g)?.length).toBe(1); // actual: 2
  expect(out).toBe(sse);
});
