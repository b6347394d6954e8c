import { describe, expect, test } from "bun:test";
import { anthropicMessages, CLAUDE_CODE_IDENTITY, hasClaudeCodeIdentity, ITEM_FIELDS_KEY } from "../../../formats/anthropic-messages/index.ts";
import type { BuildTarget } from "../../../formats/codec.ts";
import { FormatError, type HubMessage, type HubRequest } from "../../../formats/hub.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { clientRequest, regressionCase } from "../../support/fixtures.ts";
import { pointer as at, expectUpstream } from "../../support/json.ts";

const ANTHROPIC: BuildTarget = { model: "claude-x", kind: "anthropic", family: "anthropic", stream: true };
const COMPAT: BuildTarget = { model: "glm-5", kind: "anthropic-compatible", family: "provider:glm", stream: true };

const build = (req: HubRequest, target: BuildTarget = ANTHROPIC) => anthropicMessages.buildRequest(req, target);
const parse = (body: unknown) => anthropicMessages.parseRequest!(body);

function hub(messages: HubMessage[], extra: Partial<HubRequest> = {}): HubRequest {
  return { model: "m", system: [], messages, tools: [], stream: true, source: { format: "openai-chat", extra: {} }, ...extra };
}

// ---------------------------------------------------------------------------------------------

describe("Claude Code requests: parse then build for kind anthropic keeps everything", () => {
  for (const file of ["claude-code-default.json", "claude-code-prefix.json", "claude-code-tool-use-1.json", "claude-code-tool-use-2.json"]) {
    test(file, async () => {
      const body = await clientRequest(file);
      const parsed = parse(body);
      const built = build(parsed, { model: body.model, kind: "anthropic", family: "anthropic", stream: true });
      expect(built.body).toEqual(body);
      expect(built.warnings).toEqual([]);
      // The same holds for claude-code, the subscription kind.
      expect(build(parsed, { model: body.model, kind: "claude-code", family: "anthropic", stream: true }).body).toEqual(body);
    });
  }

  test("what the hub sees in claude-code-default: system blocks with cache markers, the in-messages system turn, adaptive thinking, effort, tools", async () => {
    const body = await clientRequest("claude-code-default.json");
    const h = parse(body);
    expect(h.system.map((p) => p.cacheControl)).toEqual([undefined, { type: "ephemeral" }, { type: "ephemeral" }]);
    expect(h.messages.map((m) => m.role)).toEqual(["user", "system"]);
    expect(h.reasoning).toEqual({ enabled: true, adaptive: true, display: "omitted", effort: "medium" });
    expect(h.maxOutputTokens).toBe(128000);
    expect(h.tools.length).toBe(body.tools.length);
    const deferred = h.tools.find((t) => t.kind === "function" && t.deferLoading);
    expect(deferred && deferred.kind === "function" && deferred.name).toBe("DeferredToolPlaceholder");
    expect(h.user).toBe(body.metadata.user_id);
    expect(h.source.extra.context_management).toEqual(body.context_management);
    expect((h.source.extra[ITEM_FIELDS_KEY] as any).messages["1"]).toEqual({ output_config: { effort: "medium" } });
  });

  test("claude-code-tool-use-2: the tool_use/tool_result pair and budgeted thinking survive", async () => {
    const body = await clientRequest("claude-code-tool-use-2.json");
    const h = parse(body);
    expect(h.reasoning).toEqual({ enabled: true, budgetTokens: 31999, display: "omitted" });
    const call = h.messages[1].content[1];
    expect(call).toEqual({ type: "tool_call", id: "toolu_fake_1", name: "Bash", arguments: JSON.stringify(body.messages[1].content[1].input) });
    const result = h.messages[2].content[0];
    expect(result.type === "tool_result" && [result.callId, result.isError, result.cacheControl]).toEqual(["toolu_fake_1", false, { type: "ephemeral" }]);
    const out = build(h).body;
    expect(at(out, "/thinking")).toEqual({ type: "enabled", budget_tokens: 31999, display: "omitted" });
    expect(at(out, "/max_tokens")).toBe(32000);
  });

  test("for anthropic-compatible the in-messages system turn is hoisted into system, after the client's system blocks", async () => {
    const body = await clientRequest("claude-code-default.json");
    const out = build(parse(body), COMPAT);
    const msgs = at(out.body, "/messages") as any[];
    expect(msgs.map((m) => m.role)).toEqual(["user"]);
    const sys = at(out.body, "/system") as any[];
    expect(sys.length).toBe(4);
    expect(sys[3]).toEqual(body.messages[1].content[0]);
  });
});

describe("builder-side regression cases (hand-built hub requests and the Chat codec's parser)", () => {
  test("B33-anthropic: per-part cache_control on a system message is kept on the matching system block", async () => {
    const c = await regressionCase("B33-anthropic");
    const h = hub([
      { role: "system", content: [{ type: "text", text: "Rules A", cacheControl: { type: "ephemeral" } }, { type: "text", text: "Rules B" }] },
      { role: "user", content: [{ type: "text", text: "hi" }] },
    ]);
    expectUpstream(build(h).body, c.expect.upstream_request);
  });

  test("B34: no empty text block next to tool calls, no empty system", async () => {
    const c = await regressionCase("B34");
    const h = hub(
      [
        { role: "system", content: [{ type: "text", text: "" }] },
        { role: "user", content: [{ type: "text", text: "list" }] },
        { role: "assistant", content: [{ type: "text", text: "" }, { type: "tool_call", id: "call_2", name: "ls", arguments: "{}" }] },
        { role: "user", content: [{ type: "tool_result", callId: "call_2", content: [{ type: "text", text: "a.txt" }] }] },
      ],
      { tools: [{ kind: "function", name: "ls", parameters: { type: "object", properties: {} } }] },
    );
    expectUpstream(build(h).body, c.expect.upstream_request);
  });

  test("B27: reasoning asked for, but the replayed tool turn has no signed thinking → no budgeted thinking", async () => {
    const c = await regressionCase("B27");
    const h = hub(
      [
        { role: "user", content: [{ type: "text", text: "list files" }] },
        { role: "assistant", content: [{ type: "tool_call", id: "call_1", name: "ls", arguments: "{}" }] },
        { role: "user", content: [{ type: "tool_result", callId: "call_1", content: [{ type: "text", text: "a.txt" }] }] },
      ],
      { tools: [{ kind: "function", name: "ls", parameters: { type: "object", properties: {} } }], maxOutputTokens: 8000, reasoning: { effort: "medium" } },
    );
    const out = build(h);
    expectUpstream(out.body, c.expect.upstream_request);
    expect(out.warnings.map((w) => w.code)).toContain("dropped_thinking_config");
  });

  test("B27 counterpart: the same tool turn starting with Anthropic-signed thinking keeps budgeted thinking", () => {
    const h = hub(
      [
        { role: "user", content: [{ type: "text", text: "list files" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", text: "need ls", signature: { family: "anthropic", value: "SIG" } },
            { type: "tool_call", id: "call_1", name: "ls", arguments: "{}" },
          ],
        },
        { role: "user", content: [{ type: "tool_result", callId: "call_1", content: [{ type: "text", text: "a.txt" }] }] },
      ],
      { tools: [{ kind: "function", name: "ls", parameters: { type: "object", properties: {} } }], maxOutputTokens: 8000, reasoning: { effort: "medium" } },
    );
    const body = build(h).body;
    expect(at(body, "/thinking")).toEqual({ type: "enabled", budget_tokens: 8192 });
    expect(at(body, "/messages/1/content/0")).toEqual({ type: "thinking", thinking: "need ls", signature: "SIG" });
    expect(at(body, "/max_tokens")).toBe(8000 + 8192); // budget ≥ max_tokens → raised, never shrunk
  });

  test("B28: reasoning_effort becomes thinking; temperature and top_k dropped; budget < max_tokens", async () => {
    const c = await regressionCase("B28");
    const h = hub([{ role: "user", content: [{ type: "text", text: "prove it" }] }], {
      maxOutputTokens: 2048,
      temperature: 0.2,
      topK: 40,
      reasoning: { effort: "high" },
    });
    const out = build(h);
    expectUpstream(out.body, c.expect.upstream_request);
    const budget = at(out.body, "/thinking/budget_tokens") as number;
    expect(budget).toBeGreaterThanOrEqual(1024);
    expect(budget).toBeLessThan(at(out.body, "/max_tokens") as number);
    expect(out.warnings.filter((w) => w.code === "dropped_field").length).toBe(2);
  });

  for (const id of ["B27", "B28", "B33-anthropic", "B34"]) {
    test(`${id} through the Chat codec's parseRequest`, async () => {
      const c = await regressionCase(id);
      const h = openaiChat.parseRequest!(c.request);
      expectUpstream(build(h).body, c.expect.upstream_request);
    });
  }
});

describe("request mapping details", () => {
  test("mid-conversation system/developer turns from another format are hoisted in order, with a warning", () => {
    const out = build(
      hub(
        [
          { role: "user", content: [{ type: "text", text: "a" }] },
          { role: "developer", content: [{ type: "text", text: "dev rule" }] },
          { role: "assistant", content: [{ type: "text", text: "b" }] },
          { role: "system", content: [{ type: "text", text: "sys rule" }] },
          { role: "user", content: [{ type: "text", text: "c" }] },
        ],
        { system: [{ type: "text", text: "top" }] },
      ),
    );
    expect(at(out.body, "/system")).toEqual([
      { type: "text", text: "top" },
      { type: "text", text: "dev rule" },
      { type: "text", text: "sys rule" },
    ]);
    expect((at(out.body, "/messages") as any[]).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(out.warnings.map((w) => w.code)).toContain("hoisted_system_message");
  });

  test("N consecutive tool results become one user turn, results first, following text after them", () => {
    const out = build(
      hub([
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [
            { type: "tool_call", id: "c1", name: "a", arguments: '{"x":1}' },
            { type: "tool_call", id: "c2", name: "b", arguments: "" },
          ],
        },
        { role: "user", content: [{ type: "tool_result", callId: "c1", content: [{ type: "text", text: "r1" }] }] },
        { role: "user", content: [{ type: "text", text: "also" }, { type: "tool_result", callId: "c2", content: [], isError: true }] },
      ]),
    );
    const msgs = at(out.body, "/messages") as any[];
    expect(msgs.length).toBe(3);
    expect(msgs[1].content).toEqual([
      { type: "tool_use", id: "c1", name: "a", input: { x: 1 } },
      { type: "tool_use", id: "c2", name: "b", input: {} },
    ]);
    expect(msgs[2].content).toEqual([
      { type: "tool_result", tool_use_id: "c1", content: "r1" },
      { type: "tool_result", tool_use_id: "c2", is_error: true },
      { type: "text", text: "also" },
    ]);
  });

  test("tool ids are sanitised deterministically and identically in the call and its result", () => {
    const mk = (id: string) =>
      build(
        hub([
          { role: "user", content: [{ type: "text", text: "go" }] },
          { role: "assistant", content: [{ type: "tool_call", id, name: "f", arguments: "{}" }] },
          { role: "user", content: [{ type: "tool_result", callId: id, content: [{ type: "text", text: "ok" }] }] },
        ]),
      ).body;
    const a = mk("call.1:x|y");
    const callId = at(a, "/messages/1/content/0/id") as string;
    expect(callId).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(at(a, "/messages/2/content/0/tool_use_id")).toBe(callId);
    expect(at(mk("call.1:x|y"), "/messages/1/content/0/id")).toBe(callId); // same input → same output
    expect(at(mk("call_1_x_y"), "/messages/1/content/0/id")).not.toBe(callId); // no collision with the cleaned text
    expect(at(mk("toolu_01AbC-d_e"), "/messages/1/content/0/id")).toBe("toolu_01AbC-d_e"); // valid ids pass through
  });

  test("images (base64, url), PDFs and images inside tool results are kept; audio is dropped with a warning", () => {
    const out = build(
      hub([
        {
          role: "user",
          content: [
            { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBOR" } },
            { type: "image", source: { kind: "url", url: "https://x/y.jpg" }, cacheControl: { type: "ephemeral", ttl: "1h" } },
            { type: "document", source: { kind: "base64", mediaType: "application/pdf", data: "JVBER" }, filename: "a.pdf" },
            { type: "audio", data: "AAAA", format: "wav" },
            { type: "text", text: "what?" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "shot", arguments: "{}" }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              callId: "c1",
              content: [
                { type: "text", text: "screenshot:" },
                { type: "image", source: { kind: "base64", mediaType: "image/jpeg", data: "/9j/" } },
              ],
            },
          ],
        },
      ]),
    );
    expect(at(out.body, "/messages/0/content")).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
      { type: "image", source: { type: "url", url: "https://x/y.jpg" }, cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBER" }, title: "a.pdf" },
      { type: "text", text: "what?" },
    ]);
    expect(at(out.body, "/messages/2/content/0/content")).toEqual([
      { type: "text", text: "screenshot:" },
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/" } },
    ]);
    expect(out.warnings.map((w) => w.code)).toContain("dropped_content");
  });

  test("thinking: only blocks signed by the target family are sent; unsigned and foreign ones are dropped", () => {
    const msgs: HubMessage[] = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "unsigned" },
          { type: "thinking", text: "gemini", signature: { family: "gemini", value: "G" } },
          { type: "redacted_thinking", data: { family: "openai", value: "O" } },
          { type: "thinking", text: "mine", signature: { family: "anthropic", value: "A" } },
          { type: "redacted_thinking", data: { family: "anthropic", value: "R" } },
          { type: "text", text: "answer" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "more" }] },
    ];
    const out = build(hub(msgs));
    expect(at(out.body, "/messages/1/content")).toEqual([
      { type: "thinking", thinking: "mine", signature: "A" },
      { type: "redacted_thinking", data: "R" },
      { type: "text", text: "answer" },
    ]);
    expect(out.warnings.map((w) => w.code)).toContain("dropped_thinking");
    // For a third party, Anthropic's own signatures are foreign too.
    const compat = build(hub(msgs), COMPAT);
    expect(at(compat.body, "/messages/1/content")).toEqual([{ type: "text", text: "answer" }]);
  });

  test("tool_choice mapping, disable_parallel_tool_use, and no tool_choice without tools", () => {
    const tools = [{ kind: "function" as const, name: "f", parameters: { type: "object" } }];
    const msgs: HubMessage[] = [{ role: "user", content: [{ type: "text", text: "q" }] }];
    const tc = (extra: Partial<HubRequest>) => at(build(hub(msgs, { tools, ...extra })).body, "/tool_choice");
    expect(tc({ toolChoice: { type: "auto" } })).toEqual({ type: "auto" });
    expect(tc({ toolChoice: { type: "required" } })).toEqual({ type: "any" });
    expect(tc({ toolChoice: { type: "none" } })).toEqual({ type: "none" });
    expect(tc({ toolChoice: { type: "tool", name: "f" } })).toEqual({ type: "tool", name: "f" });
    expect(tc({ parallelToolCalls: false })).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(tc({ toolChoice: { type: "required" }, parallelToolCalls: false })).toEqual({ type: "any", disable_parallel_tool_use: true });
    expect(at(build(hub(msgs, { toolChoice: { type: "required" } })).body, "/tool_choice")).toBeUndefined();
  });

  test("tools: description omitted when absent, empty schema becomes an object schema, foreign provider tools dropped", () => {
    const out = build(
      hub([{ role: "user", content: [{ type: "text", text: "q" }] }], {
        tools: [
          { kind: "function", name: "a", parameters: {} },
          { kind: "function", name: "b", description: "B", parameters: { type: "object", properties: { x: { type: "string" } } }, cacheControl: { type: "ephemeral" } },
          { kind: "provider", format: "openai-responses", raw: { type: "web_search" } },
        ],
      }),
    );
    expect(at(out.body, "/tools")).toEqual([
      { name: "a", input_schema: { type: "object", properties: {} } },
      { name: "b", description: "B", input_schema: { type: "object", properties: { x: { type: "string" } } }, cache_control: { type: "ephemeral" } },
    ]);
    expect(out.warnings.map((w) => w.code)).toContain("dropped_tool");
  });

  test("max_tokens: hub value, else the target default, else 8192", () => {
    const msgs: HubMessage[] = [{ role: "user", content: [{ type: "text", text: "q" }] }];
    expect(at(build(hub(msgs, { maxOutputTokens: 300 })).body, "/max_tokens")).toBe(300);
    expect(at(build(hub(msgs), { ...ANTHROPIC, defaultMaxOutputTokens: 64000 }).body, "/max_tokens")).toBe(64000);
    expect(at(build(hub(msgs)).body, "/max_tokens")).toBe(8192);
  });

  test("thinking with a forced tool choice: the choice wins, thinking is not sent", () => {
    const out = build(
      hub([{ role: "user", content: [{ type: "text", text: "q" }] }], {
        tools: [{ kind: "function", name: "f", parameters: { type: "object" } }],
        toolChoice: { type: "tool", name: "f" },
        reasoning: { effort: "low" },
      }),
    );
    expect(at(out.body, "/thinking")).toBeUndefined();
    expect(at(out.body, "/tool_choice")).toEqual({ type: "tool", name: "f" });
  });

  test("stop sequences, metadata.user_id, temperature clamped to 0–1, sampling kept without thinking", () => {
    const out = build(
      hub([{ role: "user", content: [{ type: "text", text: "q" }] }], { stopSequences: ["</a>"], user: "u-1", temperature: 1.6, topP: 0.5, topK: 10 }),
    );
    expect(at(out.body, "/stop_sequences")).toEqual(["</a>"]);
    expect(at(out.body, "/metadata")).toEqual({ user_id: "u-1" });
    expect(at(out.body, "/temperature")).toBe(1);
    expect(at(out.body, "/top_p")).toBe(0.5);
    expect(at(out.body, "/top_k")).toBe(10);
    expect(out.warnings.map((w) => w.code)).toContain("clamped_field");
  });

  test("fields of another format's source.extra are not sent, each with a warning; an Anthropic source's are", () => {
    const msgs: HubMessage[] = [{ role: "user", content: [{ type: "text", text: "q" }] }];
    const chat = build(hub(msgs, { source: { format: "openai-chat", extra: { logprobs: true } } }));
    expect(at(chat.body, "/logprobs")).toBeUndefined();
    expect(chat.warnings.some((w) => w.message.includes("logprobs"))).toBe(true);
    const own = build(hub(msgs, { source: { format: "anthropic-messages", extra: { service_tier: "auto" } } }));
    expect(at(own.body, "/service_tier")).toBe("auto");
  });

  test("previous_response_id cannot be honoured: FormatError 400 with param (case B41)", () => {
    try {
      build(hub([{ role: "user", content: [{ type: "text", text: "q" }] }], { previousResponseId: "resp_x" }));
      throw new Error("expected a FormatError");
    } catch (e) {
      expect(e).toBeInstanceOf(FormatError);
      expect([(e as FormatError).error.status, (e as FormatError).error.param]).toEqual([400, "previous_response_id"]);
    }
  });

  test("an Anthropic client's own budget ≥ max_tokens is left alone (interleaved thinking); temperature 1 is kept", () => {
    const h = parse({
      model: "m",
      max_tokens: 4000,
      temperature: 1,
      thinking: { type: "enabled", budget_tokens: 6000 },
      messages: [{ role: "user", content: "q" }],
    });
    const body = build(h).body;
    expect([at(body, "/max_tokens"), at(body, "/thinking/budget_tokens"), at(body, "/temperature")]).toEqual([4000, 6000, 1]);
  });

  test("Anthropic source with foreign tool ids in its last tool turn and no thinking: budgeted thinking is not sent", () => {
    const h = parse({
      model: "m",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 2000 },
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "call_gemini_1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_gemini_1", content: "ok" }] },
      ],
    });
    expect(at(build(h).body, "/thinking")).toBeUndefined();
    // Adaptive thinking may skip thinking on a turn: it stays.
    const adaptive = { ...h, reasoning: { enabled: true, adaptive: true } };
    expect(at(build(adaptive).body, "/thinking")).toEqual({ type: "adaptive" });
  });
});

describe("parseRequest", () => {
  test("accepts a minimal body; string system and content; nulls for optional fields", () => {
    const h = parse({ model: "m", max_tokens: 10, system: "be brief", temperature: null, messages: [{ role: "user", content: "hi" }] });
    expect(h.system).toEqual([{ type: "text", text: "be brief" }]);
    expect(h.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
    expect(h.temperature).toBeUndefined();
    expect(h.stream).toBe(false);
    expect(h.source).toEqual({ format: "anthropic-messages", extra: {} });
  });

  test("tagged signatures get their family back; untagged ones are Anthropic's", () => {
    const h = parse({
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "a", signature: "sy|gemini|CsYB" },
            { type: "thinking", thinking: "b", signature: "EqQB" },
            { type: "redacted_thinking", data: "sy|provider:glm|RD" },
          ],
        },
      ],
    });
    expect(h.messages[1].content).toEqual([
      { type: "thinking", text: "a", signature: { family: "gemini", value: "CsYB" } },
      { type: "thinking", text: "b", signature: { family: "anthropic", value: "EqQB" } },
      { type: "redacted_thinking", data: { family: "provider:glm", value: "RD" } },
    ]);
  });

  test("tool_choice any/tool, disable_parallel_tool_use, output_config.format, stop_sequences", () => {
    const h = parse({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "q" }],
      tools: [{ name: "f", input_schema: { type: "object" } }, { type: "web_search_20250305", name: "web_search", max_uses: 3 }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      output_config: { format: { type: "json_schema", schema: { type: "object" } } },
      stop_sequences: ["X"],
    });
    expect(h.toolChoice).toEqual({ type: "required" });
    expect(h.parallelToolCalls).toBe(false);
    expect(h.responseFormat).toEqual({ type: "json_schema", schema: { type: "object" } });
    expect(h.stopSequences).toEqual(["X"]);
    expect(h.tools[1]).toEqual({ kind: "provider", format: "anthropic-messages", raw: { type: "web_search_20250305", name: "web_search", max_uses: 3 }, name: "web_search" });
  });

  test("a thinking or tool_choice type of a newer API is kept whole for Anthropic, reported dropped elsewhere", () => {
    const h = parse({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "q" }],
      tools: [{ name: "f", input_schema: { type: "object" } }],
      thinking: { type: "turbo", level: 3 },
      tool_choice: { type: "allowed", names: ["f"] },
    });
    expect(h.reasoning).toBeUndefined();
    expect(h.toolChoice).toBeUndefined();
    const own = build(h).body;
    expect(at(own, "/thinking")).toEqual({ type: "turbo", level: 3 });
    expect(at(own, "/tool_choice")).toEqual({ type: "allowed", names: ["f"] });
    const chat = openaiChat.buildRequest(h, { model: "gpt-x", kind: "openai", family: "openai", stream: true });
    expect(chat.warnings.some((w) => w.message.includes("thinking"))).toBe(true);
  });

  test("invalid bodies throw FormatError (400) naming the path", () => {
    const bad: Array<[unknown, string]> = [
      [{ messages: [] }, "model"],
      [{ model: "m", messages: [{ role: "user", content: 5 }] }, "messages.0.content"],
      [{ model: "m", messages: [{ role: "tool", content: "x" }] }, "messages.0.role"],
      [{ model: "m", messages: [{ role: "assistant", content: [{ type: "tool_use", name: "f", input: {} }] }] }, "messages.0.content.0.id"],
      [{ model: "m", messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }] }, "messages.0.content.0.tool_use_id"],
    ];
    for (const [body, param] of bad) {
      let err: unknown;
      try {
        parse(body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FormatError);
      expect((err as FormatError).error.status).toBe(400);
      expect((err as FormatError).error.param).toBe(param);
    }
  });
});

describe("tidyRequest (anthropic-compatible, no hub round trip)", () => {
  const tidy = (body: Record<string, unknown>) => anthropicMessages.tidyRequest!(body, COMPAT);

  test("hoists role:system turns, drops empty text/turns/system and null fields, merges turns, results first", () => {
    const input = {
      model: "claude-x",
      max_tokens: 100,
      system: "",
      temperature: null,
      stream: true,
      tools: [{ name: "f", description: null, input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "q" }] },
        { role: "system", content: [{ type: "text", text: "extra rules", cache_control: { type: "ephemeral" } }] },
        { role: "assistant", content: [{ type: "text", text: "" }, { type: "tool_use", id: "t.1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t.1", content: "r" }] },
        { role: "user", content: "" },
        { role: "user", content: [{ type: "text", text: "and" }] },
      ],
    };
    const snapshot = structuredClone(input);
    const out = tidy(input);
    expect(input).toEqual(snapshot); // not mutated
    const b = out.body as any;
    expect(b.model).toBe("glm-5");
    expect("temperature" in b).toBe(false);
    expect(b.tools).toEqual([{ name: "f", input_schema: { type: "object" } }]);
    expect(b.system).toEqual([{ type: "text", text: "extra rules", cache_control: { type: "ephemeral" } }]);
    expect(b.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);
    const id = b.messages[1].content[0].id;
    expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(b.messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: id, content: "r" },
      { type: "text", text: "and" },
    ]);
    expect(out.warnings.map((w) => w.code).sort()).toEqual(
      ["dropped_empty_message", "dropped_empty_text", "dropped_null_field", "hoisted_system_message"].sort(),
    );
  });

  test("thinking signed by this provider is untagged and kept; Anthropic's is dropped and thinking then disabled", () => {
    const mk = (signature: string) => ({
      model: "claude-x",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 2000 },
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "t", signature },
            { type: "tool_use", id: "call_1", name: "f", input: {} },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "ok" }] },
      ],
    });
    const own = tidy(mk("sy|provider:glm|GLMSIG")).body as any;
    expect(own.messages[1].content[0]).toEqual({ type: "thinking", thinking: "t", signature: "GLMSIG" });
    expect(own.thinking).toEqual({ type: "enabled", budget_tokens: 2000 });
    const foreign = tidy(mk("EqQBanthropic"));
    const fb = foreign.body as any;
    expect(fb.messages[1].content).toEqual([{ type: "tool_use", id: "call_1", name: "f", input: {} }]);
    expect(fb.thinking).toBeUndefined();
    expect(foreign.warnings.map((w) => w.code)).toContain("dropped_thinking_config");
  });

  test("max_tokens added when missing; a valid Claude Code body keeps its system blocks and cache markers", async () => {
    const body = await clientRequest("claude-code-tool-use-2.json");
    const out = tidy(body).body as any;
    expect(out.system).toEqual(body.system);
    expect(out.messages).toEqual(body.messages);
    // Its tools but Claude Code's DeferredToolPlaceholder, the one with defer_loading (deferred-tools.ts).
    expect(out.tools).toEqual(body.tools.filter((t: any) => t.name !== "DeferredToolPlaceholder"));
    expect(out.tools.length).toBe(body.tools.length - 1);
    const noMax = tidy({ model: "x", messages: [{ role: "user", content: "q" }] }).body as any;
    expect(noMax.max_tokens).toBe(8192);
  });
});

describe("tidyRequest for Anthropic's own API (native pair carrying foreign signatures)", () => {
  test("keeps the in-messages system turn in place, strips a tagged foreign signature, untouched otherwise", async () => {
    const body = await clientRequest("claude-code-default.json");
    const withForeign = structuredClone(body);
    withForeign.messages.push(
      { role: "assistant", content: [{ type: "thinking", thinking: "g", signature: "sy|gemini|CsYB" }, { type: "text", text: "hi" }] },
      { role: "user", content: "again" },
    );
    const out = anthropicMessages.tidyRequest!(withForeign, { ...ANTHROPIC, model: body.model }).body as any;
    expect(out.messages.slice(0, 2)).toEqual(body.messages);
    expect(out.messages[2]).toEqual({ role: "assistant", content: [{ type: "text", text: "hi" }] });
    expect(out.system).toEqual(body.system);
    const clean = anthropicMessages.tidyRequest!(body, { ...ANTHROPIC, model: body.model });
    expect(clean.body).toEqual(body);
    expect(clean.warnings).toEqual([]);
  });
});

describe("kind claude-code: Claude Code's identity line first in system (SPEC P-2)", () => {
  const CC: BuildTarget = { model: "claude-x", kind: "claude-code", family: "anthropic", stream: true };
  const identity = { type: "text", text: CLAUDE_CODE_IDENTITY };

  test("hasClaudeCodeIdentity: Claude Code's own bodies have it (after the billing block); others do not", async () => {
    for (const file of ["claude-code-default.json", "claude-code-prefix.json", "claude-code-tool-use-2.json"]) {
      expect(hasClaudeCodeIdentity((await clientRequest(file)).system)).toBe(true);
    }
    expect(hasClaudeCodeIdentity("You are a Claude agent, built on Anthropic's Claude Agent SDK.\nMore.")).toBe(true);
    expect(hasClaudeCodeIdentity("Be terse.")).toBe(false);
    expect(hasClaudeCodeIdentity([{ type: "text", text: "x-anthropic-billing-header: cc_version=1" }, { type: "text", text: "Be terse." }])).toBe(false);
    expect(hasClaudeCodeIdentity(undefined)).toBe(false);
  });

  test("buildRequest: a translated request gets the block first, hoisted system text after it", () => {
    const hub = openaiChat.parseRequest!({ model: "m", messages: [{ role: "system", content: "Sys." }, { role: "user", content: "hi" }] });
    expect(build(hub, CC).body.system).toEqual([identity, { type: "text", text: "Sys." }]);
    const bare = openaiChat.parseRequest!({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(build(bare, CC).body.system).toEqual([identity]);
    expect(build(bare, ANTHROPIC).body.system).toBeUndefined();
  });

  test("tidyRequest: string system, billing block first, and an existing identity left alone", () => {
    const base = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
    expect(anthropicMessages.tidyRequest!({ ...base, system: "Be terse." }, CC).body.system).toEqual([identity, { type: "text", text: "Be terse." }]);
    const billing = { type: "text", text: "x-anthropic-billing-header: cc_version=1" };
    const sys = [billing, { type: "text", text: "Rules.", cache_control: { type: "ephemeral" } }];
    expect(anthropicMessages.tidyRequest!({ ...base, system: sys }, CC).body.system).toEqual([billing, identity, sys[1]]);
    expect(sys.length).toBe(2); // the client's array is not mutated
    const own = [billing, { type: "text", text: CLAUDE_CODE_IDENTITY + " More." }];
    expect(anthropicMessages.tidyRequest!({ ...base, system: own }, CC).body.system).toEqual(own);
  });
});

describe("thinking raised against the model's max_output_tokens", () => {
  const turn: HubMessage[] = [{ role: "user", content: [{ type: "text", text: "think" }] }];
  const req = (maxOutputTokens: number): HubRequest => ({ ...hub(turn), maxOutputTokens, reasoning: { effort: "medium" } });

  test("within the limit: max_tokens raised by the whole budget, as before", () => {
    const out = build(req(8000), { ...ANTHROPIC, defaultMaxOutputTokens: 64_000 });
    expect([at(out.body, "/max_tokens"), at(out.body, "/thinking/budget_tokens")]).toEqual([8000 + 8192, 8192]);
    expect(out.warnings.map((w) => w.code)).not.toContain("clamped_thinking_budget");
  });

  test("past it: max_tokens is the limit, the budget what the answer leaves, and a warning says so (Anthropic refused the sum with a 400)", () => {
    const out = build(req(8000), { ...ANTHROPIC, defaultMaxOutputTokens: 12_000 });
    expect([at(out.body, "/max_tokens"), at(out.body, "/thinking/budget_tokens")]).toEqual([12_000, 4000]);
    expect(out.warnings).toContainEqual({ code: "clamped_thinking_budget", message: "thinking budget 8192 lowered to 4000: claude-x writes at most 12000 output tokens (its max_output_tokens), thinking included" });
  });

  test("a limit with no room for the least budget and an answer: thinking is left off, said", () => {
    const out = build(req(1000), { ...ANTHROPIC, defaultMaxOutputTokens: 1024 });
    expect(at(out.body, "/max_tokens")).toBe(1024);
    expect(at(out.body, "/thinking")).toBeUndefined();
    expect(out.warnings.map((w) => w.code)).toContain("dropped_thinking_config");
  });
});
