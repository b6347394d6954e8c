/**
 * Reasoning kept across the turns of a tool loop on translated lanes, with the official SDKs through
 * the real gateway (REFERENCE §3: reasoning items go back with `encrypted_content`; §5 "keep signatures
 * round-trippable through formats that lack a slot").
 *
 * - Anthropic client → Responses provider: the fake answers like OpenAI, with `encrypted_content` on
 *   its reasoning items only when the request's `include` asks for `reasoning.encrypted_content`
 *   (recorded `openai-responses/reasoning-summary-encrypted-function-call.sse`, stripped otherwise).
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";
import type { FakeReply, ReceivedRequest } from "../support/fake-upstream.ts";

const suite = gatewaySuite();

const RESPONSES_SSE = new TextDecoder().decode(await recordedBytes("openai-responses/reasoning-summary-encrypted-function-call.sse"));

/** Removes every `encrypted_content` member from the SSE's data lines (what OpenAI sends when not asked for it). */
function withoutEncrypted(sse: string): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (k !== "encrypted_content") out[k] = strip(x);
      return out;
    }
    return v;
  };
  return sse
    .split("\n")
    .map((l) => (l.startsWith("data: {") ? "data: " + JSON.stringify(strip(JSON.parse(l.slice(6)))) : l))
    .join("\n");
}

/** The reasoning item's `encrypted_content` as its `output_item.done` event gives it. */
const ENCRYPTED: string = RESPONSES_SSE.split("\n")
  .filter((l) => l.startsWith("data: {"))
  .map((l) => JSON.parse(l.slice(6)))
  .find((e) => e.type === "response.output_item.done" && e.item.type === "reasoning").item.encrypted_content;

/** Like OpenAI: the reasoning's encrypted state only when `include` asks for it; later turns get a short text reply. */
function openaiLike(r: ReceivedRequest): FakeReply {
  if (r.body.input.some((i: any) => i.type === "function_call_output")) {
    return { json: { id: "resp_2", object: "response", status: "completed", model: "o4", output: [{ type: "message", id: "msg_2", role: "assistant", status: "completed", content: [{ type: "output_text", text: "19", annotations: [] }] }], usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } } };
  }
  const asked = Array.isArray(r.body.include) && r.body.include.includes("reasoning.encrypted_content");
  return { sse: asked ? RESPONSES_SSE : withoutEncrypted(RESPONSES_SSE) };
}

describe("Anthropic client → Responses provider, thinking enabled", () => {
  const tools = [{ name: "calculator", input_schema: { type: "object" as const, properties: {} } }];
  const params = { model: "resp/o4", max_tokens: 5000, thinking: { type: "enabled" as const, budget_tokens: 2000 }, tools };

  test("the upstream is asked for encrypted reasoning; the thinking comes back signed and goes back on the tool-result turn", async () => {
    suite.gw.fake.handle(openaiLike);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const first = await anthropic.messages.stream({ ...params, messages: [{ role: "user", content: "12+7" }] }).finalMessage();
    expect(suite.gw.fake.requests[0]!.body.include).toEqual(["reasoning.encrypted_content"]);
    const thinking = first.content.find((b) => b.type === "thinking") as { signature: string } | undefined;
    expect(thinking?.signature).toBe("sy|openai|" + ENCRYPTED);
    const call = first.content.find((b) => b.type === "tool_use") as { id: string };
    const second = await anthropic.messages
      .create({
        ...params,
        messages: [
          { role: "user", content: "12+7" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "19" }] },
        ],
      })
      .withResponse();
    const input = suite.gw.fake.requests.at(-1)!.body.input as Array<Record<string, unknown>>;
    expect(input.filter((i) => i.type === "reasoning").map((i) => i.encrypted_content)).toEqual([ENCRYPTED]);
    expect(second.response.headers.get("x-switchyard-warning") ?? "").not.toContain("dropped_reasoning");
  });
});
