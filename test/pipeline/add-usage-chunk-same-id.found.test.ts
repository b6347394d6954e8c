/**
 * FOUND (review of session 46's lastChunkHead, commit 06c3d35d; not fixed here).
 *
 * What a user would notice: a native Chat stream whose upstream ignores `stream_options` (so the gateway
 * adds the usage chunk) and whose chunks keep one id but change `created`, `model` or
 * `system_fingerprint` along the way (servers that stamp `created` per chunk, e.g. llama.cpp and
 * Ollama, over a reply longer than a second; a fingerprint only on later chunks): the openai SDK's
 * `finalChatCompletion()` reads the FIRST chunk's `created` / `model` / `system_fingerprint`, and only
 * when the stream came in more than one read; read whole it gets the last chunk's. The SDK copies every
 * member of each chunk with an id into its result, the last winning (openai lib/ChatCompletionStream.js
 * `accumulateChatCompletion`: `else if (chunk.id) assignOwnProperties(snapshot, rest)`), so the added
 * chunk overwrites what the upstream ended with.
 *
 * Expected: the added chunk carries the last chunk's created / model / system_fingerprint however the
 * reads fall (what pipeline/add-usage-chunk.ts and formats/openai-chat/usage-chunk.ts `usageChunk`
 * promise: "its fields those of the stream's last chunk with an id").
 * Actual: split reads give the first chunk's (created 7, model gpt-x, fingerprint fp_1): lastChunkHead
 * returns the `known` head unchanged whenever a later line holds the same `"id":"c-1"` member (the
 * 30-byte compare, formats/openai-chat/usage-chunk.ts lastChunkHead, both `return known` paths).
 */
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { codecFor } from "../../formats/index.ts";
import type { PassthroughTap } from "../../formats/codec.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import { UsageChunkAdder } from "../../pipeline/add-usage-chunk.ts";
import { byteSample } from "../../pipeline/output-estimate.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const chunk = (choices: unknown[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c-1", object: "chat.completion.chunk", created: 7, model: "gpt-x", system_fingerprint: "fp_1", choices, ...extra })}\n\n`;
const FIRST = chunk([{ index: 0, delta: { role: "assistant", content: "Hello there, friend" }, finish_reason: null }]);
// same id, a later second, another model snapshot and fingerprint
const LAST = chunk([{ index: 0, delta: {}, finish_reason: "stop" }], { created: 12, model: "gpt-x-2", system_fingerprint: "fp_2" });
const SSE = FIRST + LAST + "data: [DONE]\n\n";

function run(sse: string, cuts: number[] = []): string {
  const codec = codecFor("openai-chat");
  const d = passthroughDriver(codec.createTap({ family: "openai", includeUsage: true }) as PassthroughTap, byteSample(codec, { family: "openai" }), undefined, new UsageChunkAdder({ estimatedInputTokens: () => 3 }));
  const bytes = enc.encode(sse);
  let out = "";
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    out += dec.decode(d.push(bytes.subarray(from, c)));
    from = c;
  }
  return out + dec.decode(d.end());
}

async function sdkFinal(sse: string) {
  const client = new OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1", fetch: (async () => new Response(sse, { headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch });
  const s = client.chat.completions.stream({ model: "gpt-x", messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } });
  const f = await s.finalChatCompletion();
  return { id: f.id, created: f.created, model: f.model, system_fingerprint: f.system_fingerprint, prompt: f.usage?.prompt_tokens };
}

describe("the added usage chunk of a stream whose id stays but whose created/model/fingerprint change", () => {
  test("the SDK's final completion is the last chunk's, read whole or in two reads", async () => {
    const want = { id: "c-1", created: 12, model: "gpt-x-2", system_fingerprint: "fp_2", prompt: 3 };
    expect(await sdkFinal(run(SSE))).toEqual(want); // passes: read whole, the last line is parsed
    expect(await sdkFinal(run(SSE, [FIRST.length]))).toEqual(want); // fails: created 7, gpt-x, fp_1
  });
});
