/**
 * Tool names OpenAI refuses (`^[a-zA-Z0-9_-]{1,64}$`), mapped for Chat and Responses targets as for
 * Anthropic and Gemini ones (formats/tool-names.ts): an MCP client's `docker.io:list_images` from a
 * Gemini client, a Claude Code MCP tool name over 64 characters; the same name in tools, history and
 * tool_choice, and the reply's calls, streamed and whole, carrying the client's name again. Names that
 * fit go as they are (the prompt cache sees the same tools). Until 2026-12-07 both went to Chat and
 * Responses providers as written, which OpenAI answers with a 400.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { EventNormalizer } from "../../formats/normalize.ts";
import { OPENAI_TOOL_NAMES, ToolNameMap } from "../../formats/tool-names.ts";
import type { DecoderOptions } from "../../formats/codec.ts";
import type { HubEvent, WireFormat } from "../../formats/hub.ts";
import { translateBody } from "../support/translate-body.ts";

const DOTTED = "docker.io:list_images";
/** A Claude Code MCP tool name (`mcp__<server>__<tool>`) of 78 characters. */
const LONG = "mcp__claude_ai_company_knowledge_base__search_documents_by_semantic_similarity";
const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const SCHEMA = { type: "object", properties: { q: { type: "string" } } };

/** A Gemini client's turn: three tools, a call of the dotted one answered, tool_config allowing it and get_weather. */
const geminiBody = {
  contents: [
    { role: "user", parts: [{ text: "list images" }] },
    { role: "model", parts: [{ functionCall: { id: "c1", name: DOTTED, args: {} } }] },
    { role: "user", parts: [{ functionResponse: { id: "c1", name: DOTTED, response: { images: [] } } }] },
  ],
  tools: [{ functionDeclarations: [{ name: "get_weather", parameters: SCHEMA }, { name: DOTTED, parameters: SCHEMA }, { name: LONG, parameters: SCHEMA }] }],
  toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [DOTTED, "get_weather"] } },
};

/** An Anthropic client's turn: the long name declared, called and answered, and named in tool_choice. */
const anthropicBody = {
  model: "m",
  max_tokens: 100,
  messages: [
    { role: "user", content: "search" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: LONG, input: { q: "x" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] },
  ],
  tools: [
    { name: "get_weather", input_schema: SCHEMA },
    { name: LONG, input_schema: SCHEMA },
  ],
  tool_choice: { type: "tool", name: LONG },
};

const TARGETS: Array<{ to: WireFormat; kind: "openai" | "openai-compatible" | "openai-responses" }> = [
  { to: "openai-chat", kind: "openai" },
  { to: "openai-chat", kind: "openai-compatible" },
  { to: "openai-responses", kind: "openai-responses" },
];

/** The function names a Chat or Responses body declares, calls in its history, and names in tool_choice. */
function namesOf(to: WireFormat, body: Record<string, any>): { declared: string[]; called: string[]; choice: string[] } {
  if (to === "openai-chat") {
    const choice = body.tool_choice;
    return {
      declared: (body.tools ?? []).map((t: any) => t.function.name),
      called: body.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.function.name)),
      choice: choice?.function ? [choice.function.name] : (choice?.allowed_tools?.tools ?? []).map((t: any) => t.function.name),
    };
  }
  const choice = body.tool_choice;
  return {
    declared: (body.tools ?? []).map((t: any) => t.name),
    called: body.input.filter((i: any) => i.type === "function_call").map((i: any) => i.name),
    choice: choice?.name ? [choice.name] : (choice?.tools ?? []).map((t: any) => t.name),
  };
}

describe("a Chat or Responses target gets names OpenAI takes, the same in tools, history and tool_choice", () => {
  for (const t of TARGETS) {
    test(`Gemini client → ${t.kind}: the dotted and the long name mapped, get_weather as it is; the decoder hints map them back`, () => {
      const built = translateBody("gemini", geminiBody, t.to, t.kind);
      const n = namesOf(t.to, built.body);
      expect(n.declared.slice(0, 2)).toEqual(["get_weather", "docker_io_list_images"]);
      expect(n.declared.every((d) => OPENAI_NAME.test(d))).toBe(true);
      if (t.kind !== "openai-compatible") {
        expect(n.declared[2]).toMatch(OPENAI_NAME);
        expect(n.declared[2]).toStartWith(LONG.slice(0, 55) + "_");
      }
      expect(n.called).toEqual(["docker_io_list_images"]);
      if (t.kind === "openai-compatible") {
        // A third-party server gets the allowed tools declared and the mode (the Chat builder's rule):
        // the allowed names are matched as sent.
        expect(n.declared).toEqual(["get_weather", "docker_io_list_images"]);
        expect(built.body.tool_choice).toBe("required");
      } else expect(n.choice).toEqual(["docker_io_list_images", "get_weather"]);
      const long = namesOf(t.to, translateBody("gemini", { ...geminiBody, toolConfig: undefined }, t.to, t.kind).body).declared[2]!;
      expect(built.decoderHints?.toolNames).toEqual({ docker_io_list_images: DOTTED, [long]: LONG });
      expect(built.warnings.filter((w) => w.code === "renamed_tool").map((w) => w.message)).toEqual([
        `The tool name "${DOTTED}" is not a valid OpenAI tool name; sent as "docker_io_list_images".`,
        `The tool name "${LONG}" is not a valid OpenAI tool name; sent as "${long}".`,
      ]);
    });

    test(`Anthropic client → ${t.kind}: a 78-character MCP name fits in 64, the same in tools, the call and tool_choice`, () => {
      const built = translateBody("anthropic-messages", anthropicBody, t.to, t.kind);
      const n = namesOf(t.to, built.body);
      const sent = n.called[0]!;
      expect(sent).toMatch(OPENAI_NAME);
      expect(sent.length).toBe(64);
      expect(n.declared).toEqual(["get_weather", sent]);
      expect(n.choice).toEqual([sent]);
      expect(built.decoderHints?.toolNames).toEqual({ [sent]: LONG });
    });

    test(`names that fit OpenAI's rule go to ${t.kind} as they are, with no hint and no warning`, () => {
      const body = { ...anthropicBody, messages: [{ role: "user", content: "w?" }], tools: [{ name: "get_weather", input_schema: SCHEMA }, { name: "mcp__docs__search-1", input_schema: SCHEMA }], tool_choice: { type: "tool", name: "mcp__docs__search-1" } };
      const built = translateBody("anthropic-messages", body, t.to, t.kind);
      expect(namesOf(t.to, built.body)).toEqual({ declared: ["get_weather", "mcp__docs__search-1"], called: [], choice: ["mcp__docs__search-1"] });
      expect(built.decoderHints).toBeUndefined();
      expect(built.warnings.map((w) => w.code)).not.toContain("renamed_tool");
    });
  }
});

describe("OPENAI_TOOL_NAMES in a ToolNameMap", () => {
  test("two long names alike in their first 64 characters stay two names of 64, in either order; a clash with a declared name gets a suffix", () => {
    const a = `${"x".repeat(70)}_alpha`;
    const b = `${"x".repeat(70)}_beta`;
    const m1 = new ToolNameMap(OPENAI_TOOL_NAMES);
    const m2 = new ToolNameMap(OPENAI_TOOL_NAMES);
    const [a1, b1] = [m1.map(a), m1.map(b)];
    const [b2, a2] = [m2.map(b), m2.map(a)];
    expect(a1).not.toBe(b1);
    expect([a1.length, b1.length]).toEqual([64, 64]);
    expect([a2, b2]).toEqual([a1, b1]);
    const m = new ToolNameMap(OPENAI_TOOL_NAMES);
    expect(m.map("a_b")).toBe("a_b");
    expect(m.map("a.b")).toBe("a_b_2");
    expect(m.map("")).toBe("_");
    expect(m.renamed()).toEqual({ a_b_2: "a.b", _: "" });
  });
});

/** Provider SSE for a call named `name` (Chat or Responses), the way OpenAI streams it. */
function callStream(to: WireFormat, name: string): string {
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  if (to === "openai-chat") {
    const chunk = (delta: unknown, finish: string | null = null) => ev({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
    return chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name, arguments: "" } }] }) + chunk({ tool_calls: [{ index: 0, function: { arguments: "{}" } }] }) + chunk({}, "tool_calls") + "data: [DONE]\n\n";
  }
  const item = { type: "function_call", id: "fc_1", call_id: "call_1", name, arguments: "{}", status: "completed" };
  const resp = (status: string, output: unknown[]) => ({ id: "resp_1", object: "response", model: "m", status, output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } });
  return (
    ev({ type: "response.created", response: resp("in_progress", []) }) +
    ev({ type: "response.output_item.added", output_index: 0, item: { ...item, arguments: "", status: "in_progress" } }) +
    ev({ type: "response.function_call_arguments.delta", output_index: 0, item_id: "fc_1", delta: "{}" }) +
    ev({ type: "response.output_item.done", output_index: 0, item }) +
    ev({ type: "response.completed", response: resp("completed", [item]) })
  );
}

/** A whole provider reply with a call named `name`. */
function callBody(to: WireFormat, name: string): unknown {
  if (to === "openai-chat") return { id: "c", object: "chat.completion", model: "m", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name, arguments: "{}" } }] }, finish_reason: "tool_calls" }] };
  return { id: "resp_1", object: "response", model: "m", status: "completed", output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name, arguments: "{}", status: "completed" }], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
}

describe("the reply's calls carry the client's names (Chat and Responses decoders, toolNames)", () => {
  const opts: DecoderOptions = { family: "openai", toolNames: { docker_io_list_images: DOTTED } };
  for (const to of ["openai-chat", "openai-responses"] as const) {
    test(`${to}, streamed: the mapped name comes back as the client's; another name as it came`, () => {
      for (const [sent, client] of [
        ["docker_io_list_images", DOTTED],
        ["get_weather", "get_weather"],
      ]) {
        const events: HubEvent[] = [];
        const n = new EventNormalizer((e) => events.push(e));
        const d = codecFor(to).createDecoder(opts, (e) => n.event(e));
        d.push(new TextEncoder().encode(callStream(to, sent!)));
        d.end();
        n.end();
        expect(events.flatMap((e) => (e.type === "block_start" && e.block.type === "tool_call" ? [e.block.name] : []))).toEqual([client!]);
      }
    });

    test(`${to}, whole: the mapped name comes back as the client's`, () => {
      const resp = codecFor(to).decodeResponse(callBody(to, "docker_io_list_images"), opts);
      expect(resp.content.flatMap((p) => (p.type === "tool_call" ? [p.name] : []))).toEqual([DOTTED]);
    });
  }
});
