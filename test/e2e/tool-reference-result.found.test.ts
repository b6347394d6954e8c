/**
 * Found in a tryout with the real Claude Code 2.1.332 in front of an openai-compatible and a gemini
 * provider, with an MCP server configured (`claude -p … --mcp-config …`): Claude Code declares its MCP
 * tools deferred (`defer_loading: true`, plus a `DeferredToolPlaceholder`) and loads one through its
 * `ToolSearch` tool, whose result is a `tool_reference` block (`{"type": "tool_reference",
 * "tool_name": "mcp__facts__lookup_fact"}`) that Anthropic's API expands into the tool's definition.
 * The gateway reads a tool_result's blocks by their `text` only, so the block vanished: the Chat
 * provider got `{"role": "tool", "content": ""}` (the Gemini one `{"result": ""}`), no warning in the
 * route trace, while ToolSearch's own description tells the model the result holds the matched tools'
 * definitions. The model is told nothing about what was loaded.
 *
 * Asked here: the provider's tool message says which tool the reference loaded. It fails on the code
 * of 2026-12-07 (63730a88).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

test("a ToolSearch tool_result holding a tool_reference reaches a Chat provider naming the tool it loaded", async () => {
  gw.fake.enqueue(simpleReply("openai-chat", { text: "ok" }, false));
  const body = {
    model: "chat/gpt-test",
    max_tokens: 100,
    tools: [
      { name: "ToolSearch", description: "Fetches full schema definitions for deferred tools", input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
      { name: "mcp__facts__lookup_fact", description: "Look up a fact by topic", input_schema: { type: "object", properties: { topic: { type: "string" } } }, defer_loading: true },
    ],
    messages: [
      { role: "user", content: "Look up a fact" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_ts1", name: "ToolSearch", input: { query: "select:mcp__facts__lookup_fact" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_ts1", content: [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }] }] },
    ],
  };
  const res = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
  const sent = gw.fake.requests.at(-1)!.body;
  const toolMsg = sent.messages.find((m: any) => m.role === "tool");
  expect(toolMsg.tool_call_id).toBe("toolu_ts1");
  expect(JSON.stringify(toolMsg.content)).toContain("mcp__facts__lookup_fact");
});
