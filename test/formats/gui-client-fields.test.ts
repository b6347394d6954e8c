/**
 * What OpenAI-compatible GUI apps and SDKs send (Open WebUI, LibreChat, Continue, aider/litellm, the
 * openai SDK) and what a translated lane makes of it: found by a GUI-app tryout (2026-12-07), written as
 * the behaviour should be before it was fixed; each failed on the code before its fix. Client bodies
 * are parsed with the Chat codec and built with the target's, as the pipeline does
 * (test/formats/cross-format-fields.test.ts does the same).
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { translateBody } from "../support/translate-body.ts";
import type { BuildTarget, ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";

/** Chat client body → provider body for a `kind` target speaking `to` (non-streamed). */
const fromChat = (body: Record<string, unknown>, to: WireFormat, kind: ProviderKind, model = "up-model") => translateBody("openai-chat", body, to, kind, model);

const weatherTool = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
const messages = (...m: unknown[]) => ({ model: "m", messages: m });
type Block = { type: string; id?: string; tool_use_id?: string };
type Msg = { role: string; content: Block[] };

/** Anthropic's rules for tool blocks: every tool_result answers a tool_use of the assistant turn just before it, and every tool_use is answered in the next turn. */
function anthropicToolPairingProblems(msgs: Msg[]): string[] {
  const problems: string[] = [];
  msgs.forEach((m, i) => {
    const blocks = Array.isArray(m.content) ? m.content : [];
    if (m.role === "assistant") {
      const ids = blocks.filter((b) => b.type === "tool_use").map((b) => b.id);
      const next = msgs[i + 1];
      const answered = new Set((next?.content ?? []).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id));
      for (const id of ids) if (!answered.has(id)) problems.push(`messages.${i}: tool_use ${id} has no tool_result in the next message`);
    } else {
      const prev = msgs[i - 1];
      const asked = new Set((prev?.role === "assistant" ? prev.content : []).filter((b) => b.type === "tool_use").map((b) => b.id));
      for (const b of blocks) if (b.type === "tool_result" && !asked.has(b.tool_use_id)) problems.push(`messages.${i}: tool_result ${b.tool_use_id} answers no tool_use`);
    }
  });
  return problems;
}

describe("a history trimmed by the app (REFERENCE §5.7 Orphans: drop/repair, warn)", () => {
  // Open WebUI / LibreChat / Continue cut old messages to fit the context: the first kept message can
  // be a tool result whose call was cut, and a turn whose tool call the user abandoned has no result.
  const trimmed = messages(
    { role: "tool", tool_call_id: "call_gone", content: "old result" },
    { role: "user", content: "next" },
    { role: "assistant", content: "", tool_calls: [{ id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
    { role: "user", content: "never mind" },
  );

  test("the Gemini lane repairs both, with warnings (today's reference behaviour)", () => {
    const built = fromChat({ ...trimmed, tools: [weatherTool] }, "gemini", "gemini");
    expect(built.warnings.map((w) => w.code).sort()).toEqual(["missing_tool_result", "orphan_tool_result"]);
  });

  test("the Anthropic lane sends no orphan tool_result and no unanswered tool_use (Anthropic answers 400 to either)", () => {
    const built = fromChat({ ...trimmed, tools: [weatherTool] }, "anthropic-messages", "anthropic");
    expect(anthropicToolPairingProblems(built.body.messages as Msg[])).toEqual([]);
    expect(built.warnings.length).toBeGreaterThan(0);
  });

  test("the Responses lane sends no function_call_output without its function_call, nor a call without its output", () => {
    const built = fromChat({ ...trimmed, tools: [weatherTool] }, "openai-responses", "openai-responses");
    const input = built.body.input as Array<{ type: string; call_id?: string }>;
    const calls = new Set(input.filter((i) => i.type === "function_call").map((i) => i.call_id));
    const outputs = new Set(input.filter((i) => i.type === "function_call_output").map((i) => i.call_id));
    expect([...outputs].filter((id) => !calls.has(id))).toEqual([]);
    expect([...calls].filter((id) => !outputs.has(id))).toEqual([]);
  });
});

describe("a trimmed history on the Chat lane (a Responses client on a Chat provider)", () => {
  test("no tool message without the tool_calls before it, no tool_calls without their tool messages", () => {
    const hub = codecFor("openai-responses").parseRequest!({
      model: "m",
      input: [
        { type: "function_call_output", call_id: "call_gone", output: "old result" },
        { role: "user", content: "next" },
        { type: "function_call", call_id: "call_2", name: "get_weather", arguments: "{}" },
        { role: "user", content: "never mind" },
      ],
    });
    const target: BuildTarget = { model: "up-model", kind: "openai", family: "openai", stream: false };
    const built = codecFor("openai-chat").buildRequest({ ...hub, model: "up-model", stream: false }, target);
    expect(built.body.messages).toEqual([
      { role: "user", content: "Result of tool call call_gone:\nold result" },
      { role: "user", content: "next" },
      { role: "assistant", tool_calls: [{ id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_2", content: "Error: No result was provided for this tool call." },
      { role: "user", content: "never mind" },
    ]);
    expect(built.warnings.map((w) => w.code)).toEqual(["orphan_tool_result", "missing_tool_result"]);
  });
});

describe("orphan repair keeps what is not an orphan", () => {
  test("a Responses client's result for a call of its previous_response_id is sent as a function_call_output, without a warning", () => {
    const hub = codecFor("openai-responses").parseRequest!({
      model: "m",
      previous_response_id: "resp_1",
      input: [{ type: "function_call_output", call_id: "call_prev", output: "12C" }],
    });
    const target: BuildTarget = { model: "up-model", kind: "openai-responses", family: "openai", stream: false };
    const built = codecFor("openai-responses").buildRequest({ ...hub, model: "up-model", stream: false }, target);
    expect(built.body.input).toEqual([{ type: "function_call_output", call_id: "call_prev", output: "12C" }]);
    expect(built.warnings.map((w) => w.code)).not.toContain("orphan_tool_result");
  });

  test("so is one in a Responses client's stored conversation", () => {
    const hub = codecFor("openai-responses").parseRequest!({ model: "m", conversation: "conv_1", input: [{ type: "function_call_output", call_id: "call_prev", output: "12C" }] });
    const target: BuildTarget = { model: "up-model", kind: "openai-responses", family: "openai", stream: false };
    const built = codecFor("openai-responses").buildRequest({ ...hub, model: "up-model", stream: false }, target);
    expect(built.body.input).toEqual([{ type: "function_call_output", call_id: "call_prev", output: "12C" }]);
    expect(built.body.conversation).toBe("conv_1");
  });

  test("the Anthropic lane turns the trimmed result into text and answers the abandoned call with an error result", () => {
    const built = fromChat(
      { ...messages({ role: "tool", tool_call_id: "call_gone", content: "old result" }, { role: "user", content: "next" }, { role: "assistant", content: "", tool_calls: [{ id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } }] }, { role: "user", content: "never mind" }), tools: [weatherTool] },
      "anthropic-messages",
      "anthropic",
    );
    expect(built.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Result of tool call call_gone:\nold result" }, { type: "text", text: "next" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "call_2", name: "get_weather", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_2", content: "No result was provided for this tool call.", is_error: true }, { type: "text", text: "never mind" }] },
    ]);
    expect(built.warnings.map((w) => w.message)).toEqual([
      "A tool result without a matching tool call was sent to Anthropic as text.",
      "A tool call in history had no result; Anthropic was sent an error result for it.",
    ]);
  });
});

describe("tool history in a request that declares no tools", () => {
  // A follow-up ("summarize the chat", a title request carrying the history) after a tool loop: OpenAI
  // takes it; Anthropic answers 400 "Requests which include `tool_use` or `tool_result` blocks must
  // define tools."
  test("reaches Anthropic either with tools declared or with the tool blocks as text", () => {
    const built = fromChat(
      messages(
        { role: "user", content: "w?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
        { role: "user", content: "summarize the chat" },
      ),
      "anthropic-messages",
      "anthropic",
    );
    const blocks = (built.body.messages as Msg[]).flatMap((m) => m.content);
    const hasToolBlocks = blocks.some((b) => b.type === "tool_use" || b.type === "tool_result");
    expect(hasToolBlocks && !built.body.tools).toBe(false);
  });

  test("the legacy `functions` parameter declares the tools its legacy history uses", () => {
    const built = fromChat(
      {
        ...messages(
          { role: "user", content: "hi" },
          { role: "assistant", content: null, function_call: { name: "lookup", arguments: '{"q":"x"}' } },
          { role: "function", name: "lookup", content: "result" },
        ),
        functions: [{ name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } }],
      },
      "anthropic-messages",
      "anthropic",
    );
    expect((built.body.tools as Array<{ name: string }> | undefined)?.map((t) => t.name)).toEqual(["lookup"]);
  });
});

describe("tool history without tools: the rule (README, Translation)", () => {
  const loop = messages(
    { role: "user", content: "w?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
    { role: "tool", tool_call_id: "call_1", content: "sunny" },
    { role: "user", content: "Write a title for this chat" },
  );

  test("Anthropic gets the history's tools declared with an empty schema and tool_choice none, and the client a warning naming them", () => {
    const built = fromChat(loop, "anthropic-messages", "anthropic");
    expect(built.body.tools).toEqual([{ name: "get_weather", input_schema: { type: "object", properties: {} } }]);
    expect(built.body.tool_choice).toEqual({ type: "none" });
    expect(built.warnings).toEqual([
      {
        code: "declared_history_tools",
        message: "The history calls tools the request does not declare (get_weather); Anthropic takes tool blocks only with tools, so they were declared with an empty schema and tool_choice none.",
      },
    ]);
  });

  test("a request that declares its tools is sent as before (no extra declaration, its own tool_choice)", () => {
    const built = fromChat({ ...loop, tools: [weatherTool], tool_choice: "auto" }, "anthropic-messages", "anthropic");
    expect((built.body.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["get_weather"]);
    expect(built.body.tool_choice).toEqual({ type: "auto" });
    expect(built.warnings.map((w) => w.code)).not.toContain("declared_history_tools");
  });

  test("legacy function_call {name} → tool_choice of that tool; \"none\" → none; functions and function_call are not named dropped", () => {
    const fns = { functions: [{ name: "lookup", description: "Look up", parameters: { type: "object", properties: { q: { type: "string" } } } }] };
    const named = fromChat({ ...messages({ role: "user", content: "hi" }), ...fns, function_call: { name: "lookup" } }, "anthropic-messages", "anthropic");
    expect(named.body.tools).toEqual([{ name: "lookup", description: "Look up", input_schema: { type: "object", properties: { q: { type: "string" } } } }]);
    expect(named.body.tool_choice).toEqual({ type: "tool", name: "lookup" });
    expect(named.warnings).toEqual([]);
    const none = fromChat({ ...messages({ role: "user", content: "hi" }), ...fns, function_call: "none" }, "anthropic-messages", "anthropic");
    expect(none.body.tool_choice).toEqual({ type: "none" });
    const gemini = fromChat({ ...messages({ role: "user", content: "hi" }), ...fns }, "gemini", "gemini");
    expect((gemini.body.tools as Array<{ functionDeclarations: Array<{ name: string }> }>)[0]!.functionDeclarations.map((d) => d.name)).toEqual(["lookup"]);
  });
});

describe("Chat's data-retention and metadata fields on other lanes", () => {
  test("Chat store:false reaches a Responses provider as store:false (OpenAI stores Responses by default)", () => {
    const built = fromChat({ ...messages({ role: "user", content: "hi" }), store: false }, "openai-responses", "openai-responses");
    expect(built.body.store).toBe(false);
  });

  test("a Chat request without store is not stored by a Responses provider either (Chat's default is not to store)", () => {
    const built = fromChat(messages({ role: "user", content: "hi" }), "openai-responses", "openai-responses");
    expect(built.body.store).toBe(false);
  });

  test("Chat metadata dropped on the Anthropic lane is named in a warning (SPEC F-2)", () => {
    const built = fromChat({ ...messages({ role: "user", content: "hi" }), metadata: { app: "x" } }, "anthropic-messages", "anthropic");
    expect(built.body.metadata).toBeUndefined();
    expect(built.warnings.map((w) => w.message).join("\n")).toContain("metadata");
  });

  test("a strict tool keeps strict on Anthropic or is named in a warning (SPEC F-2)", () => {
    const strictTool = { type: "function", function: { name: "get_weather", strict: true, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } } };
    const built = fromChat({ ...messages({ role: "user", content: "w?" }), tools: [strictTool] }, "anthropic-messages", "anthropic");
    const sent = (built.body.tools as Array<Record<string, unknown>>)[0]!;
    expect(sent.strict === true || built.warnings.some((w) => w.message.includes("strict"))).toBe(true);
  });
});

describe("fields the Anthropic lane drops are named (SPEC F-2)", () => {
  test("metadata, tool strict, a message name, prompt_cache_key and image detail: each in a warning; user still becomes metadata.user_id", () => {
    const strictTool = { type: "function", function: { name: "get_weather", strict: true, parameters: { type: "object", properties: {} } } };
    const built = fromChat(
      {
        ...messages({ role: "user", name: "alice", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } }] }),
        metadata: { app: "x" },
        prompt_cache_key: "chat-42",
        user: "u1",
        tools: [strictTool],
      },
      "anthropic-messages",
      "anthropic",
    );
    expect(built.body.metadata).toEqual({ user_id: "u1" });
    expect((built.body.tools as Array<Record<string, unknown>>)[0]!.strict).toBeUndefined();
    expect(built.warnings.map((w) => w.message)).toEqual([
      "A message name (Chat `name`) has no Anthropic equivalent and was dropped",
      'Image detail "low" has no Anthropic equivalent and was dropped',
      "Tool strict has no Anthropic equivalent on translated requests and was dropped; the arguments are not checked against the schema",
      "metadata has no Anthropic equivalent (Anthropic's metadata takes user_id only) and was dropped",
      "prompt_cache_key has no Anthropic equivalent (Anthropic caches at cache_control markers) and was dropped",
    ]);
  });

  test("detail auto (the default) and strict false lose nothing and are not warned", () => {
    const built = fromChat(
      {
        ...messages({ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png", detail: "auto" } }] }),
        tools: [{ type: "function", function: { name: "f", strict: false, parameters: { type: "object", properties: {} } } }],
      },
      "anthropic-messages",
      "anthropic",
    );
    expect(built.warnings).toEqual([]);
  });
});

describe("images towards Anthropic (REFERENCE §5.5)", () => {
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5ErkJggg==";
  const JPEG = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHSEf";
  const HEIC = btoa("\0\0\0\x18ftypheic\0\0\0\0mif1heic");
  const image = (url: string) => ({ type: "image_url", image_url: { url } });
  const send = (...parts: unknown[]) => fromChat(messages({ role: "user", content: [{ type: "text", text: "see" }, ...parts] }), "anthropic-messages", "anthropic");
  const sources = (built: { body: Record<string, unknown> }) =>
    (built.body.messages as Array<{ content: Array<{ type: string; source?: unknown }> }>)[0]!.content.filter((b) => b.type === "image").map((b) => b.source);

  test("PNG bytes declared image/jpeg go as image/png, with a warning; bytes that match their type go as they are", () => {
    const built = send(image(`data:image/jpeg;base64,${PNG}`), image(`data:image/jpeg;base64,${JPEG}`));
    expect(sources(built)).toEqual([
      { type: "base64", media_type: "image/png", data: PNG },
      { type: "base64", media_type: "image/jpeg", data: JPEG },
    ]);
    expect(built.warnings).toEqual([{ code: "corrected_media_type", message: "An image declared image/jpeg holds image/png bytes; it was sent as image/png." }]);
  });

  test("SVG (base64 or text data URL) and HEIC are not sent, each named in a warning; the text still is", () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"/>';
    const built = send(image(`data:image/svg+xml;base64,${btoa(svg)}`), image(`data:image/svg+xml;utf8,${encodeURIComponent(svg)}`), image(`data:image/heic;base64,${HEIC}`));
    expect(sources(built)).toEqual([]);
    expect((built.body.messages as Array<{ content: unknown[] }>)[0]!.content).toEqual([{ type: "text", text: "see" }]);
    expect(built.warnings.map((w) => w.message)).toEqual([
      "An image of type image/svg+xml was not sent: Anthropic takes JPEG, PNG, GIF and WebP images only.",
      "An image of type image/heic was not sent: Anthropic takes JPEG, PNG, GIF and WebP images only.",
    ]);
  });

  test("an OpenAI file id is not sent to Anthropic (warned); an Anthropic file id is", () => {
    const built = send({ type: "file", file: { file_id: "file-abc123" } }, { type: "file", file: { file_id: "file_011CNha8iCJcU1wXNR6q4V8w" } });
    const docs = (built.body.messages as Array<{ content: Array<{ type: string; source?: unknown }> }>)[0]!.content.filter((b) => b.type === "document");
    expect(docs.map((d) => d.source)).toEqual([{ type: "file", file_id: "file_011CNha8iCJcU1wXNR6q4V8w" }]);
    expect(built.warnings).toEqual([{ code: "dropped_media", message: "A document given by another provider's file id was not sent to Anthropic." }]);
  });
});

describe("tool names another format allows", () => {
  // Gemini takes `[a-zA-Z_][a-zA-Z0-9_.:-]*` (formats/gemini/names.ts), and the Gemini lane renames
  // what Gemini refuses; Anthropic takes only `^[a-zA-Z0-9_-]{1,128}$` and answers 400 "tools.0.custom.name:
  // String should match pattern" for a dot, a colon or a space.
  test("a Gemini client's dotted MCP tool name reaches Anthropic in a form Anthropic takes", () => {
    const hub = codecFor("gemini").parseRequest!({
      contents: [{ role: "user", parts: [{ text: "x" }] }],
      tools: [{ functionDeclarations: [{ name: "docker.io:list_images", parameters: { type: "object", properties: {} } }] }],
    });
    const target: BuildTarget = { model: "up-model", kind: "anthropic", family: "anthropic", stream: false };
    const built = codecFor("anthropic-messages").buildRequest({ ...hub, model: "up-model", stream: false }, target);
    for (const t of built.body.tools as Array<{ name: string }>) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
  });
});

describe("tool names Anthropic refuses, mapped there and back", () => {
  const tool = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });
  const names = ["docker.io:list_images", "github.create issue", "天気", "get_weather"];
  const request = {
    ...messages(
      { role: "user", content: "list" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "docker.io:list_images", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "[]" },
    ),
    tools: names.map(tool),
    tool_choice: { type: "function", function: { name: "github.create issue" } },
  };
  const built = fromChat(request, "anthropic-messages", "anthropic");
  const sent = (built.body.tools as Array<{ name: string }>).map((t) => t.name);

  test("every name Anthropic takes, distinct; valid names unchanged; history and tool_choice use the same names; each change warned", () => {
    expect(sent).toEqual(["docker_io_list_images", "github_create_issue", "__", "get_weather"]);
    const history = built.body.messages as Array<{ content: unknown[] }>;
    expect(history[1]!.content).toEqual([{ type: "tool_use", id: "call_1", name: "docker_io_list_images", input: {} }]);
    expect(built.body.tool_choice).toEqual({ type: "tool", name: "github_create_issue" });
    expect(built.warnings.filter((w) => w.code === "renamed_tool").map((w) => w.message)).toEqual([
      'The tool name "docker.io:list_images" is not a valid Anthropic tool name; sent as "docker_io_list_images".',
      'The tool name "github.create issue" is not a valid Anthropic tool name; sent as "github_create_issue".',
      'The tool name "天気" is not a valid Anthropic tool name; sent as "__".',
    ]);
    expect(built.decoderHints?.toolNames).toEqual({ docker_io_list_images: "docker.io:list_images", github_create_issue: "github.create issue", __: "天気" });
  });

  test("two names that clean to the same name stay distinct", () => {
    const b = fromChat({ ...messages({ role: "user", content: "x" }), tools: [tool("a.b"), tool("a:b")] }, "anthropic-messages", "anthropic");
    expect((b.body.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["a_b", "a_b_2"]);
  });

  test("a JSON reply's tool call carries the client's name", () => {
    const opts = { family: "anthropic" as const, ...built.decoderHints };
    const reply = codecFor("anthropic-messages").decodeResponse(
      { type: "message", id: "msg_1", role: "assistant", model: "up-model", content: [{ type: "tool_use", id: "toolu_1", name: "github_create_issue", input: { t: 1 } }], stop_reason: "tool_use", usage: { input_tokens: 1, output_tokens: 1 } },
      opts,
    );
    expect(reply.content).toEqual([{ type: "tool_call", id: "toolu_1", name: "github.create issue", arguments: '{"t":1}' }]);
    const chat = codecFor("openai-chat").encodeResponse!(reply, { model: "m" } as never) as { choices: Array<{ message: { tool_calls: Array<{ function: { name: string } }> } }> };
    expect(chat.choices[0]!.message.tool_calls[0]!.function.name).toBe("github.create issue");
  });

  test("a streamed tool call carries the client's name; a name the builder did not change (even `constructor`) passes as it came", () => {
    const opts = { family: "anthropic" as const, ...built.decoderHints };
    const events: Array<{ type: string; block?: { name?: string } }> = [];
    const dec = codecFor("anthropic-messages").createDecoder(opts, (e) => events.push(e as never));
    const sse = (t: string, d: unknown) => `event: ${t}\ndata: ${JSON.stringify(d)}\n\n`;
    dec.push(
      new TextEncoder().encode(
        sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "up-model", content: [], usage: { input_tokens: 1, output_tokens: 0 } } }) +
          sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "__", input: {} } }) +
          sse("content_block_stop", { type: "content_block_stop", index: 0 }) +
          sse("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_2", name: "constructor", input: {} } }) +
          sse("content_block_stop", { type: "content_block_stop", index: 1 }),
      ),
    );
    expect(events.filter((e) => e.type === "block_start").map((e) => e.block?.name)).toEqual(["天気", "constructor"]);
  });
});
