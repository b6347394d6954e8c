/**
 * Chat requests: parseRequest (client body → hub), buildRequest (hub → `openai` / `openai-compatible`
 * body) and tidyRequest (same-format third-party upstream), incl. regression cases B31 (chat →
 * responses), B33 (cache markers), B35 (no null description) and B37-chat (token-limit field), played
 * at codec level against the `upstream_request` pointers the cases give.
 */
import { describe, expect, test } from "bun:test";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { FormatError, type HubRequest } from "../../../formats/hub.ts";
import type { BuildTarget, ProviderKind } from "../../../formats/codec.ts";
import { regressionCase } from "../../support/fixtures.ts";
import { expectUpstream, pointer } from "../../support/json.ts";

const parse = (body: unknown) => openaiChat.parseRequest!(body);
const target = (kind: ProviderKind = "openai-compatible", stream = true): BuildTarget => ({
  model: "up-model",
  kind,
  family: kind === "openai" ? "openai" : "provider:x",
  stream,
});
const hub = (over: Partial<HubRequest> = {}): HubRequest => ({
  model: "m",
  system: [],
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  stream: true,
  source: { format: "anthropic-messages", extra: {} },
  ...over,
});

/** Every path in a JSON value whose value is null (the builders never write null). */
function nullPaths(x: unknown, path = ""): string[] {
  if (x === null) return [path];
  if (typeof x !== "object") return [];
  return Object.entries(x as object).flatMap(([k, v]) => nullPaths(v, `${path}/${k}`));
}

describe("parseRequest", () => {
  test("B31 request: system kept in position, tool history as call + result, tools without description", async () => {
    const c = await regressionCase("B31");
    const h = parse(c.request);
    expect(h.system).toEqual([]);
    expect(h.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(h.messages[0].content).toEqual([{ type: "text", text: "be brief" }]);
    expect(h.messages[2].content).toEqual([{ type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' }]);
    expect(h.messages[3].content).toEqual([{ type: "tool_result", callId: "call_1", content: [{ type: "text", text: '{"temp":15}' }] }]);
    expect(h.tools).toEqual([{ kind: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }]);
    expect("description" in (h.tools[0] as object)).toBe(false);
    expect(h.stream).toBe(true);
  });

  test("reasoning_details this gateway tagged → signed (and redacted) thinking in place of reasoning_content; untagged entries are not read", () => {
    const h = parse({
      model: "m",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          reasoning_content: "last fragment only",
          reasoning_details: [
            { type: "reasoning.text", text: "Whole thought.", signature: "sy|anthropic|SIG", index: 0 },
            { type: "reasoning.encrypted", data: "sy|anthropic|RED", index: 1 },
          ],
          tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "a", content: "A" },
        { role: "assistant", content: "ok", reasoning_content: "plain", reasoning_details: [{ type: "reasoning.text", text: "x", signature: "OPENROUTER_OWN", index: 0 }] },
      ],
    });
    expect(h.messages[1]!.content).toEqual([
      { type: "thinking", text: "Whole thought.", signature: { family: "anthropic", value: "SIG" } },
      { type: "redacted_thinking", data: { family: "anthropic", value: "RED" } },
      { type: "tool_call", id: "a", name: "f", arguments: "{}" },
    ]);
    expect(h.messages[3]!.content).toEqual([{ type: "thinking", text: "plain" }, { type: "text", text: "ok" }]);
  });

  test("a tagged reasoning.encrypted entry with a tool call's id → that call's signature, not redacted thinking; untagged or unknown ids are not read", () => {
    const h = parse({
      model: "m",
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          reasoning_details: [
            { type: "reasoning.encrypted", data: "sy|gemini|SB", id: "b", format: "google-gemini-v1", index: 0 },
            { type: "reasoning.encrypted", data: "OPENROUTER_OWN", id: "a", format: "google-gemini-v1", index: 1 },
            { type: "reasoning.encrypted", data: "sy|gemini|SZ", id: "z", index: 2 },
          ],
          tool_calls: [
            { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
            { id: "b", type: "function", function: { name: "g", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "a", content: "A" },
        { role: "tool", tool_call_id: "b", content: "B" },
      ],
    });
    expect(h.messages[1]!.content).toEqual([
      { type: "tool_call", id: "a", name: "f", arguments: "{}" },
      { type: "tool_call", id: "b", name: "g", arguments: "{}", signature: { family: "gemini", value: "SB" } },
    ]);
  });

  test("consecutive tool messages become ONE user turn, in order; a following user message stays separate", () => {
    const h = parse({
      model: "m",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: "", tool_calls: [
          { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "g", arguments: "" } },
        ] },
        { role: "tool", tool_call_id: "a", content: "A" },
        { role: "tool", tool_call_id: "b", content: [{ type: "text", text: "B" }] },
        { role: "user", content: "thanks" },
      ],
    });
    expect(h.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "user"]);
    // assistant "" next to tool calls: no empty text part (B34)
    expect(h.messages[1].content.map((p) => p.type)).toEqual(["tool_call", "tool_call"]);
    expect(h.messages[2].content.map((p) => (p.type === "tool_result" ? p.callId : p.type))).toEqual(["a", "b"]);
  });

  test("content parts: data-URL and https images, audio, PDF file, file id; detail and cache_control kept", () => {
    const h = parse({
      model: "m",
      messages: [
        { role: "user", content: [
          { type: "text", text: "look", cache_control: { type: "ephemeral" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR", detail: "high" } },
          { type: "image_url", image_url: { url: "https://x.test/a.jpg" } },
          { type: "input_audio", input_audio: { data: "UklG", format: "wav" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" } },
          { type: "file", file: { file_id: "file-123" } },
        ] },
      ],
    });
    expect(h.messages[0].content).toEqual([
      { type: "text", text: "look", cacheControl: { type: "ephemeral" } },
      { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" }, detail: "high" },
      { type: "image", source: { kind: "url", url: "https://x.test/a.jpg" } },
      { type: "audio", data: "UklG", format: "wav" },
      { type: "document", source: { kind: "base64", mediaType: "application/pdf", data: "JVBE" }, filename: "a.pdf" },
      { type: "document", source: { kind: "file_id", fileId: "file-123" } },
    ]);
  });

  test("scalar fields: token limit, stop, effort, response_format, n, user, cache key, include_usage, tool choice; extras kept", () => {
    const h = parse({
      model: "m",
      messages: [{ role: "developer", content: "terse" }, { role: "user", content: "hi" }],
      max_tokens: 50,
      max_completion_tokens: 100,
      stop: "</a>",
      reasoning_effort: "high",
      response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" }, strict: true } },
      n: 2,
      user: "u1",
      prompt_cache_key: "k",
      stream: true,
      stream_options: { include_usage: false },
      tools: [{ type: "function", function: { name: "f", description: null, parameters: null } }],
      tool_choice: { type: "function", function: { name: "f" } },
      parallel_tool_calls: false,
      seed: 7,
      metadata: { a: "b" },
      logprobs: null,
    });
    expect(h.messages[0]).toEqual({ role: "developer", content: [{ type: "text", text: "terse" }] });
    expect(h.maxOutputTokens).toBe(100);
    expect(h.stopSequences).toEqual(["</a>"]);
    expect(h.reasoning).toEqual({ effort: "high" });
    expect(h.responseFormat).toEqual({ type: "json_schema", name: "x", schema: { type: "object" }, strict: true });
    expect(h.n).toBe(2);
    expect(h.user).toBe("u1");
    expect(h.promptCacheKey).toBe("k");
    expect(h.includeUsage).toBe(false);
    expect(h.tools).toEqual([{ kind: "function", name: "f", parameters: { type: "object", properties: {} } }]);
    expect(h.toolChoice).toEqual({ type: "tool", name: "f" });
    expect(h.parallelToolCalls).toBe(false);
    expect(h.source).toEqual({ format: "openai-chat", extra: { seed: 7, metadata: { a: "b" } } });
  });

  test("assistant reasoning_content (vendor field) is read as a thinking part before the text", () => {
    const h = parse({ model: "m", messages: [{ role: "assistant", content: "A", reasoning_content: "R" }] });
    expect(h.messages[0].content).toEqual([{ type: "thinking", text: "R" }, { type: "text", text: "A" }]);
  });

  test("legacy function_call / function messages pair up through a minted id", () => {
    const h = parse({
      model: "m",
      messages: [
        { role: "assistant", content: null, function_call: { name: "f", arguments: '{"x":1}' } },
        { role: "function", name: "f", content: "42" },
      ],
    });
    const call = h.messages[0].content[0];
    const result = h.messages[1].content[0];
    expect(call.type === "tool_call" && result.type === "tool_result" && call.id === result.callId).toBe(true);
  });

  test("invalid bodies are a 400 FormatError naming the field", () => {
    const bad: Array<[unknown, string]> = [
      [{ model: "m" }, "messages"],
      [{ model: "m", messages: [{ role: "robot", content: "x" }] }, "messages[0].role"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "video_url", video_url: {} }] }] }, "messages[0].content[0]"],
      [{ model: "m", messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
      [{ model: "m", messages: [], max_tokens: "many" }, "max_tokens"],
    ];
    for (const [body, param] of bad) {
      let err: unknown;
      try {
        parse(body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FormatError);
      expect((err as FormatError).error).toMatchObject({ kind: "invalid_request", status: 400, param });
    }
  });
});

describe("a refused reply appended back to history (the SDK's message: content null, refusal set)", () => {
  const body = {
    model: "m",
    messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: null, refusal: "I can't help with that.", tool_calls: null },
      { role: "assistant", content: [{ type: "refusal", refusal: "Still no." }] },
      { role: "user", content: "why not?" },
    ],
  };

  test("keeps the turn: parsed as refusal text, sent as the assistant's text by every builder and the tidy pass", () => {
    const h = parse(body);
    expect(h.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", [{ type: "text", text: "q" }]],
      ["assistant", [{ type: "text", text: "I can't help with that.", refusal: true }]],
      ["assistant", [{ type: "text", text: "Still no.", refusal: true }]],
      ["user", [{ type: "text", text: "why not?" }]],
    ]);
    const anth = anthropicMessages.buildRequest(h, { model: "c", kind: "anthropic", family: "anthropic", stream: false }).body as any;
    expect(anth.messages.map((m: any) => [m.role, m.content.map((c: any) => c.text).join("")])).toEqual([
      ["user", "q"],
      ["assistant", "I can't help with that.Still no."],
      ["user", "why not?"],
    ]);
    const tidy = openaiChat.tidyRequest!(body, target()).body as any;
    expect(tidy.messages.map((m: any) => [m.role, m.content, m.refusal])).toEqual([
      ["user", "q", undefined],
      ["assistant", "I can't help with that.", undefined],
      ["assistant", [{ type: "refusal", refusal: "Still no." }], undefined],
      ["user", "why not?", undefined],
    ]);
  });
});

describe("buildRequest", () => {
  test("B37-chat: kind openai gets max_completion_tokens and never max_tokens; openai-compatible gets max_tokens", async () => {
    const c = await regressionCase("B37-chat");
    const h = anthropicMessages.parseRequest!(c.request);
    expectUpstream(openaiChat.buildRequest(h, target("openai")).body, c.expect.upstream_request);
    const compat = openaiChat.buildRequest(h, target("openai-compatible")).body;
    expect(compat.max_tokens).toBe(1000);
    expect("max_completion_tokens" in compat).toBe(false);
  });

  test("B35: a tool without description is sent with the key omitted, never null", async () => {
    const c = await regressionCase("B35");
    const built = openaiChat.buildRequest(anthropicMessages.parseRequest!(c.request), target()).body;
    expectUpstream(built, c.expect.upstream_request);
    expect(nullPaths(built)).toEqual([]);
    // the same from a hub made by hand (independent of the Anthropic parser)
    const own = openaiChat.buildRequest(hub({ tools: [{ kind: "function", name: "Glob", parameters: { type: "object" } }] }), target()).body;
    expect(pointer(own, "/tools/0/function")).toEqual({ name: "Glob", parameters: { type: "object" } });
  });

  test("B33: cache markers from an Anthropic client are not sent to a plain Chat upstream", async () => {
    const c = await regressionCase("B33");
    const built = openaiChat.buildRequest(anthropicMessages.parseRequest!(c.request), target()).body;
    expectUpstream(built, c.expect.upstream_request);
    expect(JSON.stringify(built)).not.toContain("cache_control");
  });

  test("system prompt → leading system message; developer → system for third-party servers, kept for openai", () => {
    const h = hub({
      system: [{ type: "text", text: "A", cacheControl: { type: "ephemeral" } }, { type: "text", text: "B" }],
      messages: [{ role: "developer", content: [{ type: "text", text: "D" }] }, { role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    expect(openaiChat.buildRequest(h, target()).body.messages).toEqual([
      { role: "system", content: "A\n\nB" },
      { role: "system", content: "D" },
      { role: "user", content: "hi" },
    ]);
    expect(pointer(openaiChat.buildRequest(h, target("openai")).body, "/messages/1/role")).toBe("developer");
  });

  test("tool results: tool messages first, text only; images follow in a user message; error results prefixed", () => {
    const h = hub({
      messages: [
        { role: "assistant", content: [{ type: "text", text: "Looking." }, { type: "tool_call", id: "toolu_1", name: "shot", arguments: "" }, { type: "tool_call", id: "toolu_2", name: "ls", arguments: '{"d":"."}' }] },
        {
          role: "user",
          content: [
            { type: "tool_result", callId: "toolu_1", content: [{ type: "text", text: "captured" }, { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } }] },
            { type: "tool_result", callId: "toolu_2", content: [{ type: "text", text: "denied" }], isError: true },
            { type: "text", text: "what do you see?" },
          ],
        },
      ],
    });
    const { body, warnings } = openaiChat.buildRequest(h, target());
    expect(body.messages).toEqual([
      { role: "assistant", content: "Looking.", tool_calls: [
        { id: "toolu_1", type: "function", function: { name: "shot", arguments: "{}" } },
        { id: "toolu_2", type: "function", function: { name: "ls", arguments: '{"d":"."}' } },
      ] },
      { role: "tool", tool_call_id: "toolu_1", content: "captured" },
      { role: "tool", tool_call_id: "toolu_2", content: "Error: denied" },
      { role: "user", content: [
        { type: "text", text: "Image returned by tool call toolu_1:" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
        { type: "text", text: "what do you see?" },
      ] },
    ]);
    expect(warnings).toEqual([]);
  });

  test("kind openai: thinking is not sent; a warning only when it carried a signature (or was redacted)", () => {
    const plain = hub({ messages: [{ role: "user", content: [{ type: "text", text: "q" }] }, { role: "assistant", content: [{ type: "thinking", text: "hmm" }, { type: "text", text: "ok" }] }] });
    const a = openaiChat.buildRequest(plain, target("openai"));
    expect(a.body.messages).toEqual([{ role: "user", content: "q" }, { role: "assistant", content: "ok" }]);
    expect(a.warnings).toEqual([]);
    const signed = hub({ messages: [{ role: "user", content: [{ type: "text", text: "q" }] }, { role: "assistant", content: [{ type: "thinking", text: "hmm", signature: { family: "anthropic", value: "s" } }, { type: "text", text: "ok" }] }] });
    const b = openaiChat.buildRequest(signed, target("openai"));
    expect(b.body.messages).toEqual([{ role: "user", content: "q" }, { role: "assistant", content: "ok" }]);
    expect(b.warnings.map((w) => w.code)).toEqual(["stripped_signature"]);
  });

  test("openai-compatible: the current tool loop's reasoning goes back as reasoning_content (DeepSeek/Kimi/GLM/Qwen), earlier turns' does not, signatures never", () => {
    const h = hub({
      messages: [
        { role: "user", content: [{ type: "text", text: "first question" }] },
        { role: "assistant", content: [{ type: "thinking", text: "old reasoning" }, { type: "text", text: "old answer" }] },
        { role: "user", content: [{ type: "text", text: "fix the bug" }] },
        { role: "assistant", content: [{ type: "thinking", text: "look at the file" }, { type: "tool_call", id: "call_1", name: "read", arguments: '{"path":"a.ts"}' }] },
        { role: "user", content: [{ type: "tool_result", callId: "call_1", content: [{ type: "text", text: "code" }] }] },
        { role: "assistant", content: [{ type: "thinking", text: "now patch it", signature: { family: "anthropic", value: "sig" } }, { type: "tool_call", id: "call_2", name: "patch", arguments: "{}" }] },
        { role: "user", content: [{ type: "tool_result", callId: "call_2", content: [{ type: "text", text: "done" }] }] },
      ],
    });
    const built = openaiChat.buildRequest(h, target("openai-compatible"));
    const assistants = (built.body.messages as any[]).filter((m) => m.role === "assistant");
    expect(assistants.map((m) => m.reasoning_content)).toEqual([undefined, "look at the file", "now patch it"]);
    expect(assistants[0]).toEqual({ role: "assistant", content: "old answer" });
    expect(JSON.stringify(built.body)).not.toContain("sig");
    expect(assistants.every((m) => !String(m.content ?? "").includes("reasoning"))).toBe(true);
    expect(built.warnings.map((w) => w.code)).toEqual(["stripped_signature"]);
  });

  test("tool ids over 64 characters or with odd characters are mapped the same way in call and result", () => {
    const long = "toolu_" + "x".repeat(80);
    const odd = "call:1/2";
    const h = hub({
      messages: [
        { role: "assistant", content: [{ type: "tool_call", id: long, name: "f", arguments: "{}" }, { type: "tool_call", id: odd, name: "g", arguments: "{}" }, { type: "tool_call", id: "call_ok-1", name: "h", arguments: "{}" }] },
        { role: "user", content: [{ type: "tool_result", callId: long, content: [] }, { type: "tool_result", callId: odd, content: [] }, { type: "tool_result", callId: "call_ok-1", content: [] }] },
      ],
    });
    const body = openaiChat.buildRequest(h, target()).body as any;
    const ids = body.messages[0].tool_calls.map((c: any) => c.id);
    expect(ids.map((id: string) => /^[A-Za-z0-9_-]{1,64}$/.test(id))).toEqual([true, true, true]);
    expect(ids[2]).toBe("call_ok-1");
    expect(ids[0]).not.toBe(ids[1]);
    expect(body.messages.slice(1, 4).map((m: any) => m.tool_call_id)).toEqual(ids);
    // deterministic across turns
    expect((openaiChat.buildRequest(h, target()).body as any).messages[0].tool_calls[0].id).toBe(ids[0]);
  });


  test("a tool message follows the assistant message of its call: a system message, a further assistant message or the turn's own user text between them goes after it", () => {
    const call = (id: string) => ({ type: "tool_call" as const, id, name: "f", arguments: "{}" });
    const result = (callId: string, text: string) => ({ type: "tool_result" as const, callId, content: [{ type: "text" as const, text }] });
    const text = (t: string) => ({ type: "text" as const, text: t });
    const roles = (body: any) => body.messages.map((m: any) => (m.role === "tool" ? `tool ${m.tool_call_id}` : m.tool_calls ? `assistant ${m.tool_calls.map((c: any) => c.id).join(",")}` : `${m.role} ${m.content}`));
    // An Anthropic client's consecutive assistant messages; a Responses client's developer item between a call and its output.
    const h = hub({
      messages: [
        { role: "user", content: [text("go")] },
        { role: "assistant", content: [call("c1")] },
        { role: "assistant", content: [text("checking")] },
        { role: "user", content: [result("c1", "R1")] },
        { role: "assistant", content: [call("c2"), call("c3")] },
        { role: "developer", content: [text("be brief")] },
        { role: "user", content: [text("and then?")] },
        { role: "user", content: [result("c2", "R2"), result("c3", "R3")] },
        { role: "assistant", content: [text("done")] },
      ],
    });
    const built = openaiChat.buildRequest(h, target("openai"));
    expect(roles(built.body)).toEqual([
      "user go",
      "assistant c1",
      "tool c1",
      "assistant checking",
      "assistant c2,c3",
      "tool c2",
      "tool c3",
      "developer be brief",
      "user and then?",
      "assistant done",
    ]);
    expect(built.warnings).toEqual([]);
    // A history already in order is sent as it is.
    const plain = hub({ messages: [{ role: "assistant", content: [call("c1")] }, { role: "user", content: [result("c1", "R1"), text("next")] }, { role: "system", content: [text("s")] }] });
    expect(roles(openaiChat.buildRequest(plain, target("openai")).body)).toEqual(["assistant c1", "tool c1", "user next", "system s"]);
  });

  test("a call id a client reuses turn after turn (call_0, as local models send it): each tool message follows its own turn's call", () => {
    const call = (name: string) => ({ type: "tool_call" as const, id: "call_0", name, arguments: "{}" });
    const result = (text: string) => ({ type: "tool_result" as const, callId: "call_0", content: [{ type: "text" as const, text }] });
    const h = hub({
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        { role: "assistant", content: [call("f")] },
        { role: "user", content: [result("R1")] },
        { role: "assistant", content: [call("g")] },
        { role: "user", content: [result("R2")] },
      ],
    });
    const body = openaiChat.buildRequest(h, target("openai")).body as any;
    expect(body.messages.map((m: any) => (m.role === "tool" ? `tool ${m.content}` : m.tool_calls ? `assistant ${m.tool_calls[0].function.name}` : `${m.role}`))).toEqual([
      "user",
      "assistant f",
      "tool R1",
      "assistant g",
      "tool R2",
    ]);
  });
  test("streaming builds ask include_usage; tool_choice and parallel_tool_calls only with tools; no nulls", () => {
    const withTools = hub({
      tools: [{ kind: "function", name: "f", description: "d", parameters: { type: "object" } }],
      toolChoice: { type: "tool", name: "f" },
      parallelToolCalls: false,
      stopSequences: ["a", "b", "c", "d", "e"],
      temperature: 0.5,
      topK: 5,
      reasoning: { enabled: true, budgetTokens: 10_000 },
      responseFormat: { type: "json_object" },
    });
    const { body, warnings } = openaiChat.buildRequest(withTools, target("openai"));
    expect(body).toMatchObject({
      model: "up-model",
      stream: true,
      stream_options: { include_usage: true },
      tool_choice: { type: "function", function: { name: "f" } },
      parallel_tool_calls: false,
      stop: ["a", "b", "c", "d"],
      temperature: 0.5,
      reasoning_effort: "medium", // budget 10000: REFERENCE §5.9 puts high at 16384+ (openai-common/models.ts bucketThinkingBudget)
      response_format: { type: "json_object" },
    });
    expect("top_k" in body).toBe(false);
    expect(warnings.map((w) => w.code).sort()).toEqual(["dropped_field", "dropped_field"]);
    expect(nullPaths(body)).toEqual([]);

    const noTools = openaiChat.buildRequest(hub({ toolChoice: { type: "none" }, parallelToolCalls: true }), target("openai", false)).body;
    expect("tool_choice" in noTools || "parallel_tool_calls" in noTools || "stream_options" in noTools).toBe(false);
    expect(noTools.stream).toBe(false);
  });

  test("a Chat client's extra fields are re-emitted; another format's are reported as dropped", () => {
    const chat = parse({ model: "m", messages: [{ role: "user", content: "hi" }], seed: 3, logit_bias: { "1": 2 } });
    expect(openaiChat.buildRequest(chat, target()).body).toMatchObject({ seed: 3, logit_bias: { "1": 2 } });
    const other = hub({ source: { format: "anthropic-messages", extra: { context_management: {} } } });
    const built = openaiChat.buildRequest(other, target());
    expect("context_management" in built.body).toBe(false);
    expect(built.warnings[0].message).toContain("context_management");
  });

  test("previous_response_id cannot be honoured by a Chat upstream: 400, not an answer without context", () => {
    expect(() => openaiChat.buildRequest(hub({ previousResponseId: "resp_1" }), target())).toThrow(FormatError);
  });

  test("chat → hub → chat (kind openai) keeps what the client said", () => {
    const body = {
      model: "gpt-x",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "https://x.test/i.png", detail: "low" } }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: '{"a":1}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "r" },
      ],
      tools: [{ type: "function", function: { name: "f", description: "does f", parameters: { type: "object" }, strict: true } }],
      tool_choice: "required",
      max_completion_tokens: 77,
      stream: true,
      stream_options: { include_usage: true },
      seed: 1,
    };
    const { body: out, warnings } = openaiChat.buildRequest(parse(body), { ...target("openai"), model: "gpt-x" });
    expect(warnings).toEqual([]);
    expect(out).toEqual({ ...body, messages: [body.messages[0], body.messages[1], { role: "assistant", tool_calls: body.messages[2].tool_calls }, body.messages[3]] });
  });
});

describe("B31: Chat client → Responses upstream", () => {
  test("tool history as function_call / function_call_output, flattened tools, no max_tokens/stop", async () => {
    const c = await regressionCase("B31");
    const built = openaiResponses.buildRequest(parse(c.request), { model: "gpt-x", kind: "openai-responses", family: "openai", stream: true });
    expectUpstream(built.body, c.expect.upstream_request);
  });
});

describe("tidyRequest (openai-compatible)", () => {
  const body = {
    model: "client-name",
    stream: true,
    stream_options: { include_usage: false },
    max_completion_tokens: 64,
    temperature: null,
    cache_control: { type: "ephemeral" },
    messages: [
      { role: "system", content: [{ type: "text", text: "Rules A", cache_control: { type: "ephemeral" } }, { type: "text", text: "Rules B" }] },
      { role: "developer", content: "dev" },
      { role: "user", content: "" },
      { role: "user", content: "go", name: null, cache_control: { type: "ephemeral" } },
      { role: "assistant", content: null, tool_calls: [
        { id: "a", type: "function", function: { name: "f", arguments: "{}" } },
        { id: "b", type: "function", function: { name: "g", arguments: "{}" } },
      ], refusal: null },
      { role: "user", content: "interjection" },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "tool", tool_call_id: "a", content: null },
      { role: "assistant", content: "", tool_calls: [] },
    ],
    tools: [{ type: "function", function: { name: "f", description: null, parameters: { type: "object" }, cache_control: { type: "ephemeral" } }, cache_control: { type: "ephemeral" } }],
  };

  test("B33 for a Chat client: cache markers, nulls and empty messages go; tool results follow their call in call order", () => {
    const snapshot = JSON.stringify(body);
    const { body: out, warnings } = openaiChat.tidyRequest!(body, target("openai-compatible"));
    expect(JSON.stringify(body)).toBe(snapshot); // input untouched
    expect(JSON.stringify(out)).not.toContain("cache_control");
    expect(nullPaths(out)).toEqual([]);
    expect(out.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Rules A" }, { type: "text", text: "Rules B" }] },
      { role: "system", content: "dev" },
      { role: "user", content: "go" },
      { role: "assistant", tool_calls: body.messages[4].tool_calls },
      { role: "tool", tool_call_id: "a", content: "" },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "user", content: "interjection" },
    ]);
    expect(out.tools).toEqual([{ type: "function", function: { name: "f", parameters: { type: "object" } } }]);
    expect(out).toMatchObject({ model: "up-model", max_tokens: 64, stream_options: { include_usage: true } });
    expect("max_completion_tokens" in out || "temperature" in out).toBe(false);
    expect(warnings.map((w) => w.code)).toEqual(["dropped_empty_message", "reordered_tool_results", "dropped_cache_control"]);
  });

  test("reasoning_details entries this gateway tagged (another provider's state) are not sent; a provider's own are", () => {
    const own = { type: "reasoning.text", text: "t", signature: "OWN", index: 0 };
    const out = openaiChat.tidyRequest!(
      {
        model: "x",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "a", reasoning_details: [{ type: "reasoning.text", text: "t", signature: "sy|anthropic|S", index: 0 }] },
          { role: "user", content: "more" },
          { role: "assistant", content: "b", reasoning_details: [own, { type: "reasoning.encrypted", data: "sy|gemini|G", index: 1 }] },
          { role: "user", content: "again" },
        ],
      },
      target("openai-compatible", false),
    ).body as any;
    expect(out.messages[1]).toEqual({ role: "assistant", content: "a" });
    expect(out.messages[3]).toEqual({ role: "assistant", content: "b", reasoning_details: [own] });
  });

  test("kind openai keeps the limit as max_completion_tokens; non-streaming bodies get no stream_options", () => {
    const out = openaiChat.tidyRequest!({ model: "x", messages: [{ role: "user", content: "hi" }], max_tokens: 9, stream_options: { include_usage: true } }, target("openai", false)).body;
    expect(out).toEqual({ model: "up-model", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 9 });
  });
});
