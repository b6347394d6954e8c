/**
 * Found in a tryout with the real Claude Code 2.1.332 in front of an openai-compatible and a gemini
 * provider, with an MCP server configured (`claude -p … --mcp-config …`): Claude Code declares its MCP
 * tools deferred (`defer_loading: true`, plus a `DeferredToolPlaceholder` whose description says never
 * to call it) and loads one through its `ToolSearch` tool, whose result is a `tool_reference` block
 * (`{"type": "tool_reference", "tool_name": "mcp__facts__lookup_fact"}`) that Anthropic's API expands
 * into the tool's definition. The gateway read a tool_result's blocks by their `text` only, so the
 * block vanished: the Chat provider got `{"role": "tool", "content": ""}`, the Gemini one
 * `{"result": ""}`, no warning in the route trace.
 *
 * Asked here, with the exact bodies the providers get: the tool message says which tool was loaded
 * (Chat, Gemini, Responses); the deferred tool is declared as any other there, the placeholder is not
 * sent, and Responses gets no `defer_loading` without a `tool_search` tool; an Anthropic-compatible
 * provider (GLM, LM Studio, vLLM: not all take Anthropic's deferred loading) gets the same text, the
 * tools without `defer_loading` and no placeholder, with a warning, and Claude Code's
 * `advanced-tool-use-…` beta left out of its `anthropic-beta` (the other betas kept); Anthropic gets the
 * `tool_reference` block, `defer_loading` and the beta as the client sent them (but a body the gateway
 * tidies for it sends a reference to a tool it does not declare as text, with a warning); a block
 * inside a tool result that has no equivalent and no text is named in a warning, never dropped silently.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const SAID = "Tool mcp__facts__lookup_fact is now available: call it as any other tool.";
const LOOKUP = { name: "mcp__facts__lookup_fact", description: "Look up a fact by topic", input_schema: { type: "object", properties: { topic: { type: "string" } } }, defer_loading: true };
const PLACEHOLDER = { name: "DeferredToolPlaceholder", description: "Reserved placeholder that keeps deferred tool loading active; never call this tool.", input_schema: { type: "object", properties: {} }, defer_loading: true };
const SEARCH = { name: "ToolSearch", description: "Fetches full schema definitions for deferred tools", input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } };

function body(model: string, resultContent: unknown[] = [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }]) {
  return {
    model,
    max_tokens: 100,
    tools: [SEARCH, PLACEHOLDER, LOOKUP],
    messages: [
      { role: "user", content: "Look up a fact" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_ts1", name: "ToolSearch", input: { query: "select:mcp__facts__lookup_fact" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_ts1", content: resultContent }] },
    ],
  };
}

async function send(b: unknown, headers: Record<string, string> = {}): Promise<{ sent: any; warnings: { code: string; message: string }[]; sentHeaders: Record<string, string> }> {
  const res = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers }, body: JSON.stringify(b) });
  expect(res.status).toBe(200);
  const warnings = JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]");
  await res.text();
  const seen = gw.fake.requests.at(-1)!;
  return { sent: seen.body, warnings, sentHeaders: seen.headers };
}

/** The `anthropic-beta` Claude Code 2.1.332 sends with deferred tools (test/fixtures/shared/clients/claude-code-tool-use.headers.json). */
const CLAUDE_CODE_BETAS = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20";

describe("a ToolSearch result (tool_reference) on a translated lane", () => {
  test("Chat: the tool message names the loaded tool; the tool is declared, the placeholder is not sent", async () => {
    gw.fake.enqueue(simpleReply("openai-chat", { text: "ok" }, false));
    const { sent } = await send(body("chat/gpt-test"));
    expect(sent.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_ts1", content: SAID });
    expect(sent.tools.map((t: any) => t.function.name)).toEqual(["ToolSearch", "mcp__facts__lookup_fact"]);
    expect(sent.tools[1]).toEqual({ type: "function", function: { name: "mcp__facts__lookup_fact", description: "Look up a fact by topic", parameters: { type: "object", properties: { topic: { type: "string" } } } } });
  });

  test("Gemini: the functionResponse says which tool was loaded; no placeholder declared", async () => {
    gw.fake.enqueue(simpleReply("gemini", { text: "ok" }, false));
    const { sent } = await send(body("gem/gemini-test"));
    expect(sent.contents.at(-1)).toEqual({ role: "user", parts: [{ functionResponse: { name: "ToolSearch", response: { result: SAID } } }] });
    expect(sent.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(["ToolSearch", "mcp__facts__lookup_fact"]);
  });

  test("Responses: the function_call_output says it; no defer_loading without a tool_search tool, no placeholder", async () => {
    gw.fake.enqueue(simpleReply("openai-responses", { text: "ok" }, false));
    const { sent } = await send(body("resp/gpt-test"));
    expect(sent.input.at(-1)).toEqual({ type: "function_call_output", call_id: "toolu_ts1", output: SAID });
    expect(sent.tools.map((t: any) => t.name)).toEqual(["ToolSearch", "mcp__facts__lookup_fact"]);
    expect(sent.tools[1].defer_loading).toBeUndefined();
  });

  test("Anthropic-compatible: the tool result says which tool was loaded; no defer_loading, no placeholder, and said", async () => {
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const { sent, warnings } = await send(body("anthc/claude-test"));
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_ts1", content: [{ type: "text", text: SAID }] }] });
    expect(sent.tools).toEqual([SEARCH, { name: LOOKUP.name, description: LOOKUP.description, input_schema: LOOKUP.input_schema }]);
    expect(warnings).toContainEqual({
      code: "changed_field",
      message: "Deferred tool loading (defer_loading, tool_reference) is Anthropic's own: defer_loading was not sent (the deferred tools declared as any other, Claude Code's DeferredToolPlaceholder left out) and any tool_reference block was sent as text naming the tool.",
    });
  });

  test("Anthropic: the tool_reference block and defer_loading go as the client sent them", async () => {
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const { sent } = await send(body("anth/claude-test"));
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_ts1", content: [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }] }] });
    expect(sent.tools).toEqual([SEARCH, PLACEHOLDER, LOOKUP]);
  });

  test("Anthropic, a body the gateway tidies (another provider's signed thinking in it): a tool_reference to a tool it does not declare goes as text saying so, with a warning in the header and the trace; a declared one as the block", async () => {
    const gone = { type: "tool_reference", tool_name: "mcp__gone__fetch" };
    const b = body("anth/claude-test", [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }, gone]);
    // Thinking signed by a Gemini provider (as the gateway tags it for the client): the body is tidied, not passed through.
    b.messages[1] = { role: "assistant", content: [{ type: "thinking", thinking: "search", signature: "sy|gemini|c2ln" } as any, ...(b.messages[1].content as any[])] };
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const res = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(b) });
    expect(res.status).toBe(200);
    await res.text();
    const sent = gw.fake.requests.at(-1)!.body;
    expect(sent.messages.at(-1)).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_ts1", content: [{ type: "tool_reference", tool_name: "mcp__facts__lookup_fact" }, { type: "text", text: "Tool mcp__gone__fetch was found but is not available in this request: do not call it." }] }],
    });
    expect(sent.messages[1].content.map((c: any) => c.type)).toEqual(["tool_use"]);
    expect(sent.tools).toEqual([SEARCH, PLACEHOLDER, LOOKUP]);
    const said = { code: "changed_field", message: 'A tool_reference names the tool "mcp__gone__fetch", which this request does not declare; sent as text saying it is not available.' };
    expect(JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]")).toContainEqual(said);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.warnings).toContainEqual(said);
  });

  test("Claude Code's advanced-tool-use beta: not sent to an anthropic-compatible provider once deferred loading is tidied away (its other betas are); Anthropic gets it", async () => {
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const compatible = await send(body("anthc/claude-test"), { "anthropic-beta": CLAUDE_CODE_BETAS });
    expect(compatible.sentHeaders["anthropic-beta"]).toBe("claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,thinking-token-count-2026-05-13");
    // A beta header holding only it: no header at all.
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const alone = await send(body("anthc/claude-test"), { "anthropic-beta": "advanced-tool-use-2025-11-20" });
    expect(alone.sentHeaders["anthropic-beta"]).toBeUndefined();
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const anthropic = await send(body("anth/claude-test"), { "anthropic-beta": CLAUDE_CODE_BETAS });
    expect(anthropic.sentHeaders["anthropic-beta"]).toBe(CLAUDE_CODE_BETAS);
    // A body that still uses the beta (a tool's input_examples): the header goes as sent.
    gw.fake.enqueue(simpleReply("anthropic-messages", { text: "ok" }, false));
    const examples = { ...body("anthc/claude-test"), tools: [SEARCH, { ...LOOKUP, input_examples: [{ topic: "tides" }] }] };
    const kept = await send(examples, { "anthropic-beta": CLAUDE_CODE_BETAS });
    expect(kept.sentHeaders["anthropic-beta"]).toBe(CLAUDE_CODE_BETAS);
  });

  test("a block with no equivalent and no text inside a tool result is named in a warning, not dropped silently", async () => {
    gw.fake.enqueue(simpleReply("openai-chat", { text: "ok" }, false));
    const { sent, warnings } = await send(body("chat/gpt-test", [{ type: "text", text: "found:" }, { type: "future_block", data: 1 }]));
    expect(sent.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_ts1", content: "found:" });
    expect(warnings).toContainEqual({ code: "dropped_input_item", message: "Content blocks with no equivalent in the request to chat/gpt-test were not sent: future_block (in a tool_result)." });
  });
});
