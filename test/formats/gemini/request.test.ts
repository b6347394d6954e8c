import { describe, expect, test } from "bun:test";
import { gemini, geminiPath, geminiToolNames, DUMMY_THOUGHT_SIGNATURE } from "../../../formats/gemini/index.ts";
import { thinkingConfig } from "../../../formats/gemini/build.ts";
import type { BuildTarget } from "../../../formats/codec.ts";
import type { HubMessage, HubRequest, Opaque } from "../../../formats/hub.ts";
import { clientRequest, recordedBytes, regressionCase } from "../../support/fixtures.ts";
import { decodeBytes, reply } from "../../support/gemini-harness.ts";
import { pointer as at, expectUpstream } from "../../support/json.ts";

const target: BuildTarget = { model: "gemini-2.5-flash", kind: "gemini", family: "gemini", stream: true };
const g3: BuildTarget = { ...target, model: "gemini-3-pro-preview" };

function req(over: Partial<HubRequest> = {}): HubRequest {
  return {
    model: "client-model",
    system: [],
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [],
    stream: true,
    source: { format: "anthropic-messages", extra: {} },
    ...over,
  };
}

const gsig = (value: string): Opaque => ({ family: "gemini", value });
const codes = (ws: { code: string }[]) => ws.map((w) => w.code);
const build = (r: HubRequest, t: BuildTarget = target) => gemini.buildRequest(r, t);

describe("B39: schema keywords Gemini rejects are not sent", () => {
  const check = (body: Record<string, unknown>, expect_: any) => {
    expectUpstream(body, expect_.upstream_request);
  };

  test("the case's Anthropic request, parsed by the anthropic-messages codec, builds a clean body", async () => {
    const c = await regressionCase("B39");
    const { anthropicMessages } = await import("../../../formats/anthropic-messages/index.ts");
    const hub = anthropicMessages.parseRequest!(c.request);
    const { body } = build({ ...hub, model: "gemini-x" }, { ...target, model: "gemini-x" });
    check(body, c.expect);
    expect(at(body, "/tools/0/functionDeclarations/0/parameters")).toEqual({
      type: "OBJECT",
      properties: {
        mode: { type: "STRING", enum: ["replace"] },
        path: { type: "STRING", nullable: true },
        opts: { type: "OBJECT", properties: { dry: { type: "BOOLEAN" } } },
      },
      required: ["mode"],
    });
    expect(at(body, "/generationConfig/maxOutputTokens")).toBe(200);
    expect(at(body, "/contents")).toEqual([{ role: "user", parts: [{ text: "edit the file" }] }]);
    expect(body.model).toBeUndefined();
    expect(body.stream).toBeUndefined();
  });

  test("the same from a hand-built hub request", async () => {
    const c = await regressionCase("B39");
    const { body } = build(req({ tools: [{ kind: "function", name: "edit", parameters: c.request.tools[0].input_schema }] }));
    check(body, c.expect);
  });
});

describe("contents: roles, system hoisting, merging", () => {
  test("system blocks and system/developer messages anywhere → systemInstruction, in order; roles user/model; same-role turns merged", () => {
    const { body } = build(
      req({
        system: [{ type: "text", text: "S1", cacheControl: { type: "ephemeral" } }, { type: "text", text: "" }],
        messages: [
          { role: "developer", content: [{ type: "text", text: "D1" }] },
          { role: "user", content: [{ type: "text", text: "u1" }] },
          { role: "system", content: [{ type: "text", text: "S2" }] },
          { role: "user", content: [{ type: "text", text: "u2" }] },
          { role: "assistant", content: [{ type: "text", text: "a1" }, { type: "text", text: "" }] },
          { role: "assistant", content: [{ type: "text", text: "a2" }] },
          { role: "user", content: [{ type: "text", text: "u3" }] },
        ],
      }),
    );
    expect(body.systemInstruction).toEqual({ parts: [{ text: "S1" }, { text: "D1" }, { text: "S2" }] });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "u1" }, { text: "u2" }] },
      { role: "model", parts: [{ text: "a1" }, { text: "a2" }] },
      { role: "user", parts: [{ text: "u3" }] },
    ]);
  });

  test("no systemInstruction, tools, toolConfig or generationConfig when there is nothing to say", () => {
    const { body, warnings } = build(req());
    expect(Object.keys(body)).toEqual(["contents"]);
    expect(warnings).toEqual([]);
  });
});

describe("thought signatures (REFERENCE §4.3, SPEC F-8)", () => {
  test("Gemini signatures go back exactly on the part they came with", () => {
    const { body } = build(
      req({
        messages: [
          { role: "user", content: [{ type: "text", text: "q" }] },
          {
            role: "assistant",
            content: [
              { type: "thinking", text: "plan", signature: gsig("VGhpbms=") },
              { type: "text", text: "Let me check.", signature: gsig("VGV4dA==") },
              { type: "tool_call", id: "c1", name: "get_weather", arguments: '{"city":"Oslo"}', signature: gsig("Q2FsbA==") },
              { type: "tool_call", id: "c2", name: "get_weather", arguments: '{"city":"Rome"}' },
              { type: "thinking", text: "", signature: gsig("RW1wdHk=") },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", callId: "c1", content: [{ type: "text", text: "12C" }] },
              { type: "tool_result", callId: "c2", content: [{ type: "text", text: "20C" }] },
            ],
          },
        ],
      }),
    );
    expect(at(body, "/contents/1/parts")).toEqual([
      { text: "plan", thought: true, thoughtSignature: "VGhpbms=" },
      { text: "Let me check.", thoughtSignature: "VGV4dA==" },
      { functionCall: { name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "Q2FsbA==" },
      { functionCall: { name: "get_weather", args: { city: "Rome" } } },
      { text: "", thoughtSignature: "RW1wdHk=" },
    ]);
  });

  test("history from another family: the first functionCall of each step of the current turn gets the documented placeholder", () => {
    const step = (ids: string[]): HubMessage => ({
      role: "assistant",
      content: ids.map((id) => ({ type: "tool_call" as const, id, name: "read", arguments: `{"p":"${id}"}` })),
    });
    const results = (ids: string[]): HubMessage => ({
      role: "user",
      content: ids.map((id) => ({ type: "tool_result" as const, callId: id, content: [{ type: "text" as const, text: `r${id}` }] })),
    });
    const { body } = build(
      req({
        messages: [
          { role: "user", content: [{ type: "text", text: "old turn" }] },
          step(["o1"]),
          results(["o1"]),
          { role: "assistant", content: [{ type: "text", text: "done" }] },
          { role: "user", content: [{ type: "text", text: "new turn" }] },
          step(["a", "b"]),
          results(["a", "b"]),
          step(["c"]),
          results(["c"]),
        ],
      }),
    );
    const contents = body.contents as any[];
    const sigs = contents.flatMap((c: any) => c.parts.filter((p: any) => p.functionCall).map((p: any) => [p.functionCall.args.p, p.thoughtSignature]));
    expect(sigs).toEqual([
      ["o1", undefined], // an earlier turn is not validated: nothing invented there
      ["a", DUMMY_THOUGHT_SIGNATURE],
      ["b", undefined], // parallel calls: only the first of the step
      ["c", DUMMY_THOUGHT_SIGNATURE],
    ]);
  });

  test("a step whose first call carries its Gemini signature keeps it (no placeholder)", () => {
    const { body } = build(
      req({
        messages: [
          { role: "user", content: [{ type: "text", text: "go" }] },
          { role: "assistant", content: [{ type: "tool_call", id: "x", name: "f", arguments: "", signature: gsig("Z2VtaW5p") }] },
        ],
      }),
    );
    expect(at(body, "/contents/1/parts/0")).toEqual({ functionCall: { name: "f", args: {} }, thoughtSignature: "Z2VtaW5p" });
  });

  test("foreign opaque state is never sent: Anthropic signatures, redacted thinking, unsigned reasoning (with warnings)", () => {
    const claude: Opaque = { family: "anthropic", value: "EqQBCkgIBxABGAIiQL..." };
    const { body, warnings } = build(
      req({
        messages: [
          { role: "user", content: [{ type: "text", text: "q" }] },
          {
            role: "assistant",
            content: [
              { type: "thinking", text: "claude thoughts", signature: claude },
              { type: "redacted_thinking", data: claude },
              { type: "thinking", text: "unsigned reasoning" },
              { type: "text", text: "answer", signature: claude },
            ],
          },
        ],
      }),
    );
    expect(at(body, "/contents/1")).toEqual({ role: "model", parts: [{ text: "answer" }] });
    expect(JSON.stringify(body)).not.toContain(claude.value);
    expect(codes(warnings)).toEqual(["dropped_thinking", "dropped_thinking"]);
  });
});

describe("tool calls and results (REFERENCE §5.7)", () => {
  test("results mapped by call id to the call's name, in call order, in ONE user content; response objects", () => {
    const { body, warnings } = build(
      req({
        messages: [
          { role: "user", content: [{ type: "text", text: "q" }] },
          {
            role: "assistant",
            content: [
              { type: "tool_call", id: "toolu_1", name: "read_file", arguments: '{"path":"a"}' },
              { type: "tool_call", id: "toolu_2", name: "list_dir", arguments: "" },
              { type: "tool_call", id: "toolu_3", name: "stat", arguments: "{}" },
            ],
          },
          // results arrive out of order and split over two user messages (Chat tool messages)
          { role: "user", content: [{ type: "tool_result", callId: "toolu_3", content: [{ type: "text", text: '{"size": 3, "ok": true}' }] }] },
          {
            role: "user",
            content: [
              { type: "tool_result", callId: "toolu_2", content: [{ type: "text", text: "permission denied" }], isError: true },
              { type: "tool_result", callId: "toolu_1", content: [{ type: "text", text: "line 1" }, { type: "text", text: "line 2" }] },
              { type: "text", text: "Also, hurry." },
            ],
          },
        ],
      }),
    );
    expect(warnings).toEqual([]);
    expect(at(body, "/contents/1/parts")).toEqual([
      { functionCall: { name: "read_file", args: { path: "a" } }, thoughtSignature: DUMMY_THOUGHT_SIGNATURE },
      { functionCall: { name: "list_dir", args: {} } },
      { functionCall: { name: "stat", args: {} } },
    ]);
    expect(body.contents).toHaveLength(3);
    expect(at(body, "/contents/2")).toEqual({
      role: "user",
      parts: [
        { functionResponse: { name: "read_file", response: { result: "line 1\nline 2" } } },
        { functionResponse: { name: "list_dir", response: { error: "permission denied" } } },
        { functionResponse: { name: "stat", response: { size: 3, ok: true } } },
        { text: "Also, hurry." },
      ],
    });
    expect(JSON.stringify(body)).not.toContain("toolu_"); // ids are not sent (Vertex rejects functionCall.id)
  });

  test("a JSON array or scalar result is wrapped, not sent bare", () => {
    const { body } = build(
      req({
        messages: [
          { role: "assistant", content: [{ type: "tool_call", id: "a", name: "f", arguments: "{}" }, { type: "tool_call", id: "b", name: "g", arguments: "{}" }] },
          {
            role: "user",
            content: [
              { type: "tool_result", callId: "a", content: [{ type: "text", text: "[1,2]" }] },
              { type: "tool_result", callId: "b", content: [{ type: "text", text: "{not json" }] },
            ],
          },
        ],
      }),
    );
    expect(at(body, "/contents/1/parts/0/functionResponse/response")).toEqual({ result: "[1,2]" });
    expect(at(body, "/contents/1/parts/1/functionResponse/response")).toEqual({ result: "{not json" });
  });

  test("images and PDFs inside tool results follow the functionResponses as inlineData, in the same content", () => {
    const { body } = build(
      req({
        messages: [
          { role: "assistant", content: [{ type: "tool_call", id: "s", name: "screenshot", arguments: "{}" }] },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                callId: "s",
                content: [
                  { type: "text", text: "captured" },
                  { type: "image", source: { kind: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
                  { type: "document", source: { kind: "base64", mediaType: "application/pdf", data: "JVBERi0=" } },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect(at(body, "/contents/1/parts")).toEqual([
      { functionResponse: { name: "screenshot", response: { result: "captured" } } },
      { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
      { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
    ]);
  });

  test("a result whose call is unknown becomes text; a call without a result gets an error response; both warn", () => {
    const { body, warnings } = build(
      req({
        messages: [
          { role: "user", content: [{ type: "tool_result", callId: "ghost", content: [{ type: "text", text: "orphan" }] }] },
          { role: "assistant", content: [{ type: "tool_call", id: "k1", name: "one", arguments: "{}" }, { type: "tool_call", id: "k2", name: "two", arguments: "{}" }] },
          { role: "user", content: [{ type: "tool_result", callId: "k2", content: [{ type: "text", text: "ok" }] }] },
        ],
      }),
    );
    expect(at(body, "/contents/0/parts")).toEqual([{ text: "Result of tool call ghost:\norphan" }]);
    expect(at(body, "/contents/2/parts")).toEqual([
      { functionResponse: { name: "one", response: { error: "No result was provided for this tool call." } } },
      { functionResponse: { name: "two", response: { result: "ok" } } },
    ]);
    expect(codes(warnings)).toEqual(["orphan_tool_result", "missing_tool_result"]);
  });

  test("arguments that are not a JSON object are sent as {} with a warning", () => {
    const { body, warnings } = build(req({ messages: [{ role: "assistant", content: [{ type: "tool_call", id: "x", name: "f", arguments: "[1]" }] }] }));
    expect(at(body, "/contents/0/parts/0/functionCall/args")).toEqual({});
    expect(codes(warnings)).toEqual(["invalid_tool_arguments"]);
  });
});

describe("media (REFERENCE §5.5)", () => {
  test("base64 and data: URLs inline; gs:// and Files API URIs as fileData; remote URLs dropped with a warning", () => {
    const { body, warnings } = build(
      req({
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { kind: "base64", mediaType: "image/jpeg", data: "/9j/4AAQ" } },
              { type: "image", source: { kind: "url", url: "data:image/png;base64,iVBORw0KGgo=" } },
              { type: "image", source: { kind: "url", url: "data:text/plain,hi%20there" } },
              { type: "image", source: { kind: "url", url: "gs://bucket/cat.webp" } },
              { type: "document", source: { kind: "url", url: "https://generativelanguage.googleapis.com/v1beta/files/abc123", mediaType: "application/pdf" } },
              { type: "document", source: { kind: "file_id", fileId: "files/xyz" } },
              { type: "document", source: { kind: "text", mediaType: "text/plain", data: "plain doc" } },
              { type: "image", source: { kind: "url", url: "https://example.com/cat.png" } },
              { type: "document", source: { kind: "file_id", fileId: "file-openai123" } },
              { type: "audio", data: "UklGRg==", format: "wav" },
              { type: "video", source: { kind: "url", url: "https://www.youtube.com/watch?v=abc" } },
              { type: "text", text: "describe" },
            ],
          },
        ],
      }),
    );
    expect(at(body, "/contents/0/parts")).toEqual([
      { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } },
      { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
      { inlineData: { mimeType: "text/plain", data: btoa("hi there") } },
      { fileData: { fileUri: "gs://bucket/cat.webp", mimeType: "image/webp" } },
      { fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc123", mimeType: "application/pdf" } },
      { fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/xyz" } },
      { text: "plain doc" },
      { inlineData: { mimeType: "audio/wav", data: "UklGRg==" } },
      { fileData: { fileUri: "https://www.youtube.com/watch?v=abc" } },
      { text: "describe" },
    ]);
    expect(codes(warnings)).toEqual(["dropped_media", "dropped_media"]);
  });
});

describe("tools and tool_choice (REFERENCE §5.6)", () => {
  test("one functionDeclarations entry; description omitted when absent; no-arg tools have no parameters; provider tools of other formats dropped", () => {
    const { body, warnings } = build(
      req({
        tools: [
          { kind: "function", name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
          { kind: "function", name: "now", parameters: { type: "object", properties: {} } },
          { kind: "provider", format: "openai-responses", raw: { type: "web_search" } },
          { kind: "provider", format: "gemini", raw: { googleSearch: {} } },
        ],
      }),
    );
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: "read", description: "Read a file", parameters: { type: "OBJECT", properties: { path: { type: "STRING" } }, required: ["path"] } },
          { name: "now" },
        ],
      },
      { googleSearch: {} },
    ]);
    expect(warnings).toEqual([{ code: "dropped_tool", message: "The openai-responses tool web_search has no Gemini equivalent and was not sent." }]);
  });

  test("invalid names are sanitised consistently in declarations, history and toolConfig; the reverse map restores them", () => {
    const r = req({
      tools: [
        { kind: "function", name: "mcp/fs read", parameters: { type: "object", properties: { p: { type: "string" } } } },
        { kind: "function", name: "mcp_fs_read", parameters: {} },
        { kind: "function", name: "9lives", parameters: {} },
      ],
      toolChoice: { type: "tool", name: "mcp/fs read" },
      messages: [
        { role: "assistant", content: [{ type: "tool_call", id: "t", name: "mcp/fs read", arguments: '{"p":"x"}' }] },
        { role: "user", content: [{ type: "tool_result", callId: "t", content: [{ type: "text", text: "ok" }] }] },
      ],
    });
    const { body, warnings } = build(r);
    const declared = (at(body, "/tools/0/functionDeclarations") as any[]).map((d) => d.name);
    expect(declared).toEqual(["mcp_fs_read_2", "mcp_fs_read", "_9lives"]);
    for (const n of declared) expect(n).toMatch(/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/);
    expect(at(body, "/contents/0/parts/0/functionCall/name")).toBe("mcp_fs_read_2");
    expect(at(body, "/contents/1/parts/0/functionResponse/name")).toBe("mcp_fs_read_2");
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["mcp_fs_read_2"] } });
    expect(geminiToolNames(r)).toEqual({ mcp_fs_read_2: "mcp/fs read", _9lives: "9lives" });
    expect(codes(warnings)).toEqual(["renamed_tool", "renamed_tool"]);
  });

  test("tool_choice → functionCallingConfig", () => {
    const tools = [{ kind: "function" as const, name: "f", parameters: {} }];
    const table: Array<[HubRequest["toolChoice"], unknown]> = [
      [{ type: "auto" }, { mode: "AUTO" }],
      [{ type: "required" }, { mode: "ANY" }],
      [{ type: "none" }, { mode: "NONE" }],
      [{ type: "tool", name: "f" }, { mode: "ANY", allowedFunctionNames: ["f"] }],
    ];
    for (const [choice, fcc] of table) expect(at(build(req({ tools, toolChoice: choice })).body, "/toolConfig/functionCallingConfig")).toEqual(fcc);
    expect(build(req({ toolChoice: { type: "auto" } })).body.toolConfig).toBeUndefined(); // no tools, no toolConfig
    expect(codes(build(req({ tools, parallelToolCalls: false })).warnings)).toEqual(["parallel_tool_calls"]);
  });
});

describe("generationConfig", () => {
  test("limits, sampling, stop sequences (max 5, with a warning), candidateCount, JSON schema output", () => {
    const { body, warnings } = build(
      req({
        maxOutputTokens: 1024,
        temperature: 2.5,
        topP: 0.9,
        topK: 40,
        stopSequences: ["1", "2", "3", "4", "5", "6", "7"],
        n: 1,
        responseFormat: { type: "json_schema", name: "x", schema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } } },
      }),
    );
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 1024,
      temperature: 2,
      topP: 0.9,
      topK: 40,
      stopSequences: ["1", "2", "3", "4", "5"],
      candidateCount: 1,
      responseMimeType: "application/json",
      responseJsonSchema: { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } },
    });
    expect(codes(warnings)).toEqual(["clamped_temperature", "truncated_stop_sequences"]);
    expect(at(build(req({ responseFormat: { type: "json_object" } })).body, "/generationConfig")).toEqual({ responseMimeType: "application/json" });
    const two = build(req({ n: 2 }));
    expect(at(two.body, "/generationConfig/candidateCount")).toBe(2);
    expect(codes(two.warnings)).toEqual(["extra_candidates"]);
  });

  test("fields without a Gemini slot are dropped with warnings, never silently", () => {
    const { body, warnings } = build(
      req({
        user: "u-1",
        promptCacheKey: "k",
        source: { format: "anthropic-messages", extra: { context_management: { edits: [] }, service_tier: "auto" } },
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cacheControl: { type: "ephemeral" } }] }],
      }),
    );
    expect(Object.keys(body)).toEqual(["contents"]);
    expect(warnings.map((w) => w.message)).toEqual([
      "user has no Gemini equivalent and was not sent.",
      "prompt_cache_key has no Gemini equivalent and was not sent.",
      "context_management has no Gemini equivalent and was not sent.",
      "service_tier has no Gemini equivalent and was not sent.",
      "Gemini has no per-block prompt-cache markers; cache_control was not sent.",
    ]);
  });

  test("a Gemini-native request keeps its own extra fields (safetySettings, cachedContent)", () => {
    const safety = [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", threshold: "BLOCK_NONE" }];
    const { body, warnings } = build(req({ source: { format: "gemini", extra: { safetySettings: safety, cachedContent: "cachedContents/x" } } }));
    expect(body.safetySettings).toEqual(safety);
    expect(body.cachedContent).toBe("cachedContents/x");
    expect(warnings).toEqual([]);
  });
});

describe("thinkingConfig (REFERENCE §5.9)", () => {
  const table: Array<[string, HubRequest["reasoning"], Record<string, unknown> | undefined]> = [
    ["gemini-2.5-flash", undefined, undefined],
    ["gemini-2.5-flash", { effort: "minimal" }, { includeThoughts: true, thinkingBudget: 512 }],
    ["gemini-2.5-flash", { effort: "low" }, { includeThoughts: true, thinkingBudget: 1024 }],
    ["gemini-2.5-flash", { effort: "medium" }, { includeThoughts: true, thinkingBudget: 8192 }],
    ["gemini-2.5-flash", { effort: "high" }, { includeThoughts: true, thinkingBudget: 24576 }],
    ["gemini-2.5-flash", { effort: "max" }, { includeThoughts: true, thinkingBudget: 24576 }],
    ["gemini-2.5-pro", { effort: "xhigh" }, { includeThoughts: true, thinkingBudget: 32768 }],
    ["gemini-2.5-flash", { enabled: true, budgetTokens: 31999 }, { includeThoughts: true, thinkingBudget: 24576 }],
    ["gemini-2.5-pro", { enabled: true, budgetTokens: 50 }, { includeThoughts: true, thinkingBudget: 128 }],
    ["gemini-2.5-flash", { enabled: true }, { includeThoughts: true, thinkingBudget: -1 }],
    ["gemini-2.5-flash", { enabled: false }, { thinkingBudget: 0 }],
    ["gemini-2.5-flash", { effort: "high", includeThoughts: false }, { includeThoughts: false, thinkingBudget: 24576 }],
    ["gemini-3-pro-preview", { effort: "minimal" }, { includeThoughts: true, thinkingLevel: "low" }],
    ["gemini-3-pro-preview", { effort: "medium" }, { includeThoughts: true, thinkingLevel: "high" }],
    ["gemini-3.1-pro-preview", { effort: "medium" }, { includeThoughts: true, thinkingLevel: "medium" }],
    ["gemini-3-flash-preview", { effort: "minimal" }, { includeThoughts: true, thinkingLevel: "minimal" }],
    ["gemini-3-flash-preview", { enabled: true, budgetTokens: 1024 }, { includeThoughts: true, thinkingLevel: "low" }],
    ["gemini-3-flash-preview", { enabled: true, budgetTokens: 8000 }, { includeThoughts: true, thinkingLevel: "medium" }],
    ["gemini-3-flash-preview", { enabled: true, budgetTokens: 31999 }, { includeThoughts: true, thinkingLevel: "high" }],
    ["gemini-3-pro-preview", { enabled: true, adaptive: true }, { includeThoughts: true }],
    ["gemini-3-pro-preview", { enabled: false }, { thinkingLevel: "low" }],
    ["gemini-2.5-flash", { enabled: true, budgetTokens: 4000, display: "omitted" }, { includeThoughts: false, thinkingBudget: 4000 }],
  ];
  for (const [model, reasoning, expected] of table) {
    test(`${model} ${JSON.stringify(reasoning)}`, () => {
      const out = thinkingConfig(reasoning, model);
      expect(out).toEqual(expected);
      if (out) expect("thinkingBudget" in out && "thinkingLevel" in out).toBe(false);
    });
  }

  test("Gemini 2.5 Pro cannot turn thinking off: smallest budget with a warning; it lands in generationConfig", () => {
    const { body, warnings } = build(req({ reasoning: { enabled: false } }), { ...target, model: "gemini-2.5-pro" });
    expect(at(body, "/generationConfig/thinkingConfig")).toEqual({ thinkingBudget: 128 });
    expect(codes(warnings)).toEqual(["reasoning_not_disabled"]);
    expect(at(build(req({ reasoning: { effort: "high" } }), g3).body, "/generationConfig/thinkingConfig")).toEqual({ includeThoughts: true, thinkingLevel: "high" });
  });
});

describe("a real Claude Code conversation", () => {
  test("claude-code-tool-use-2.json via the anthropic parser: valid Gemini contents, paired results, placeholder on the foreign call", async () => {
    const { anthropicMessages } = await import("../../../formats/anthropic-messages/index.ts");
    const hub = anthropicMessages.parseRequest!(await clientRequest("claude-code-tool-use-2.json"));
    const { body, warnings } = build({ ...hub, model: "gemini-2.5-pro" }, { ...target, model: "gemini-2.5-pro" });
    const contents = body.contents as any[];
    // roles alternate and start with the user
    contents.forEach((c, i) => expect(c.role).toBe(i % 2 === 0 ? "user" : "model"));
    // every functionResponse names the call it answers, one per call, right after it
    for (let i = 0; i < contents.length; i++) {
      const calls = contents[i].parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall.name);
      if (calls.length === 0) continue;
      const answers = contents[i + 1].parts.filter((p: any) => p.functionResponse).map((p: any) => p.functionResponse.name);
      expect(answers).toEqual(calls);
      expect(contents[i].parts.find((p: any) => p.functionCall).thoughtSignature).toBe(DUMMY_THOUGHT_SIGNATURE);
    }
    expect((body.systemInstruction as any).parts.length).toBe(hub.system.length);
    // Claude Code sends thinking.display "omitted": no thought text asked for
    expect(hub.reasoning?.display).toBe("omitted");
    expect(at(body, "/generationConfig/thinkingConfig")).toEqual({ includeThoughts: false, thinkingBudget: 31999 });
    // Every function tool but Claude Code's DeferredToolPlaceholder (tool-kinds.ts withoutDeferPlaceholder).
    expect((at(body, "/tools/0/functionDeclarations") as any[]).map((d) => d.name)).toEqual(hub.tools.flatMap((t) => (t.kind === "function" && t.name !== "DeferredToolPlaceholder" ? [t.name] : [])));
    expect(JSON.stringify(body)).not.toMatch(/"\$schema"|additionalProperties|"\$ref"|"default"/);
    expect(codes(warnings)).toContain("dropped_cache_control");
  });
});

describe("geminiPath", () => {
  test("streaming and non-streaming paths; models/ prefix accepted; tuned models", () => {
    expect(geminiPath("gemini-2.5-flash", true)).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(geminiPath("gemini-2.5-flash", false)).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(geminiPath("models/gemini-3-pro-preview", true)).toBe("/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse");
    expect(geminiPath("tunedModels/my-tune", false)).toBe("/v1beta/tunedModels/my-tune:generateContent");
    expect(geminiPath("odd model?x", false)).toBe("/v1beta/models/odd%20model%3Fx:generateContent");
  });
});

describe("round trip: a decoded Gemini reply, replayed as history, goes back part for part", () => {
  /** The model turn the builder writes for a recorded reply, followed by results for its calls. */
  async function replay(file: string) {
    const bytes = await recordedBytes(file);
    const resp = reply(decodeBytes(bytes)).response;
    const results = resp.content
      .filter((p) => p.type === "tool_call")
      .map((p) => ({ type: "tool_result" as const, callId: (p as { id: string }).id, content: [{ type: "text" as const, text: "ok" }] }));
    const messages: HubMessage[] = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: resp.content },
    ];
    if (results.length > 0) messages.push({ role: "user", content: results });
    const { body, warnings } = build(req({ messages }), g3);
    return { parts: at(body, "/contents/1/parts") as any[], next: at(body, "/contents/2/parts") as any[] | undefined, warnings, raw: new TextDecoder().decode(bytes) };
  }
  const sig = (raw: string, n = 0) => [...raw.matchAll(/"thoughtSignature":"([^"]+)"/g)][n]![1];

  test("text.sse: the text, then the empty-text part with its signature", async () => {
    const { parts, warnings, raw } = await replay("gemini/text.sse");
    expect(parts).toEqual([{ text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y' }, { text: "", thoughtSignature: sig(raw) }]);
    expect(warnings).toEqual([]);
  });

  test("text-then-function-call-with-id.sse: text, then the call with its own signature; the result answers it by name", async () => {
    const { parts, next, raw } = await replay("gemini/text-then-function-call-with-id.sse");
    expect(parts).toEqual([{ text: "Let me check." }, { functionCall: { name: "get_weather", args: { city: "San Francisco" } }, thoughtSignature: sig(raw) }]);
    expect(next).toEqual([{ functionResponse: { name: "get_weather", response: { result: "ok" } } }]);
  });

  test("streamed-args-no-args-call.sse: thoughts (unsigned summary) dropped with a warning, four calls, the signature only on the first", async () => {
    const { parts, next, warnings, raw } = await replay("gemini/streamed-args-no-args-call.sse");
    expect(parts).toEqual([
      { functionCall: { name: "read_theme", args: {} }, thoughtSignature: sig(raw) },
      { functionCall: { name: "read_screen", args: { id: "A" } } },
      { functionCall: { name: "read_screen", args: { id: "B" } } },
      { functionCall: { name: "read_screen", args: { id: "C" } } },
    ]);
    expect(next!.map((p) => p.functionResponse.name)).toEqual(["read_theme", "read_screen", "read_screen", "read_screen"]);
    expect(codes(warnings)).toEqual(["dropped_thinking"]);
  });
});
