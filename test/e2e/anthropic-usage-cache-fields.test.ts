/**
 * An Anthropic Messages client served from a Chat or Gemini upstream gets both cache counts in every
 * usage object — `cache_creation_input_tokens` and `cache_read_input_tokens`, 0 when the upstream said
 * nothing of them — as Anthropic itself always sends (sdk16 S2: a translated reply had neither, or only
 * the read count, so `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` was NaN).
 * Real gateway, fake upstream replaying the recorded openai-chat/text and gemini/text replies, streamed
 * (`message_start` and `message_delta`) and not.
 */
import { expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";

const suite = gatewaySuite();

const text = async (file: string) => new TextDecoder().decode(await recordedBytes(file));

const post = (model: string, stream: boolean) =>
  fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 1000, stream, messages: [{ role: "user", content: "hi" }] }),
  });

/** The `usage` of each `message_start` / `message_delta` event of an Anthropic SSE body. */
function streamUsages(sse: string): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const frame of sse.split("\n\n")) {
    const data = frame.split("\n").find((l) => l.startsWith("data: "));
    if (!data) continue;
    const ev = JSON.parse(data.slice(6));
    if (ev.type === "message_start") out.push([ev.type, ev.message.usage]);
    if (ev.type === "message_delta") out.push([ev.type, ev.usage]);
  }
  return out;
}

const usage = (input: number, output: number) => ({ input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output });

for (const lane of [
  { name: "Chat", model: "chat/gpt-4o", json: "openai-chat/text.json", sse: "openai-chat/text.sse", whole: usage(16, 363), start: usage(0, 0), end: usage(16, 300) },
  { name: "Gemini", model: "gem/gemini-2.5-pro", json: "gemini/text.json", sse: "gemini/text.sse", whole: usage(9, 272), start: usage(9, 190), end: usage(9, 208) },
]) {
  test(`from a ${lane.name} upstream: both cache counts in the non-streamed usage and in message_start / message_delta`, async () => {
    const { gw } = suite;
    const json = JSON.parse(await text(lane.json));
    const sse = await text(lane.sse);
    gw.fake.handle((r) => (r.stream ? { sse } : { json }));
    const whole = await post(lane.model, false);
    expect(whole.status).toBe(200);
    expect(((await whole.json()) as { usage: unknown }).usage).toEqual(lane.whole);
    const streamed = await post(lane.model, true);
    expect(streamed.status).toBe(200);
    expect(streamUsages(await streamed.text())).toEqual([
      ["message_start", lane.start],
      ["message_delta", lane.end],
    ]);
  });
}
