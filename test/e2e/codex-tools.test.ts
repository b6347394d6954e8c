/**
 * Codex's tool kinds through the real gateway to every provider format and back, read with the
 * official OpenAI SDK (the client Codex's wire format is): a freeform `custom` tool (`apply_patch`
 * with its Lark grammar, exactly as Codex 0.171 declares it for gpt-5.5) reaches Chat, Anthropic and
 * Gemini providers as a function tool with one string argument, its call comes back to the client as a
 * `custom_tool_call` with the exact raw patch (streamed and whole), and a history that carries a
 * `custom_tool_call` and its output reaches each provider as that provider's tool call and result.
 * `local_shell` likewise: a function with an argv array there, a `local_shell_call` exec action here.
 * Hosted tools (`web_search`) cannot run elsewhere: dropped with a warning, never faked. A function
 * in a `namespace` tool (two MCP servers' `search`) goes to those providers as namespace + name, in
 * the declarations and in history, with no warning, and the provider's call of it reaches the SDK as
 * `function_call` with `name` and `namespace` (until 2026-12-07: `search` declared twice, both
 * namespaces reported dropped).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type FakeFormat, type ReceivedRequest } from "../support/fake-upstream.ts";

/** Codex 0.171.0's apply_patch declaration (captured from `codex exec` with model gpt-5.5). */
const APPLY_PATCH = {
  type: "custom",
  name: "apply_patch",
  description: "The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
  format: {
    type: "grammar",
    syntax: "lark",
    definition:
      'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\n\nhunk: add_hunk | delete_hunk | update_hunk\nadd_hunk: "*** Add File: " filename LF add_line+\ndelete_hunk: "*** Delete File: " filename LF\nupdate_hunk: "*** Update File: " filename LF change_move? change?\n\nfilename: /(.+)/\nadd_line: "+" /(.*)/ LF -> line\n\nchange_move: "*** Move to: " filename LF\nchange: (change_context | change_line)+ eof_line?\nchange_context: ("@@" | "@@ " /(.+)/) LF\nchange_line: ("+" | "-" | " ") /(.*)/ LF\neof_line: "*** End of File" LF\n\n%import common.LF\n',
  },
};
const EXEC = {
  type: "function",
  name: "exec_command",
  description: "Runs a command.",
  strict: false,
  parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"], additionalProperties: false },
};
/** A patch with the characters JSON and SSE must carry exactly: quotes, backslashes, tabs, unicode, a blank line. */
const PATCH = '*** Begin Patch\n*** Update File: src/app.ts\n@@ function greet()\n-  return "hi";\n+  return "héllo \\"world\\"\\t✓";\n+\n*** End Patch\n';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(() => {
  gw.fake.reset();
  gw.fake.handle(undefined);
});

const client = () => new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0 });
const LANES: Array<{ name: string; model: string; format: FakeFormat }> = [
  { name: "Chat (openai-compatible)", model: "chat/qwen-x", format: "openai-chat" },
  { name: "Anthropic", model: "anth/claude-x", format: "anthropic-messages" },
  { name: "Gemini", model: "gem/gemini-x", format: "gemini" },
  { name: "Responses (native)", model: "resp/gpt-x", format: "openai-responses" },
];

/** The tool declarations of an upstream request, normalised to {name, kind, description, parameters}. */
function declaredTools(req: ReceivedRequest): Array<{ name: string; kind: string; description?: string; parameters?: any; raw: any }> {
  const b = req.body;
  switch (req.format) {
    case "openai-chat":
      return (b.tools ?? []).map((t: any) => ({ name: t.function?.name ?? t.name, kind: t.type, description: t.function?.description, parameters: t.function?.parameters, raw: t }));
    case "anthropic-messages":
      return (b.tools ?? []).map((t: any) => ({ name: t.name, kind: t.type ?? "function", description: t.description, parameters: t.input_schema, raw: t }));
    case "gemini":
      return (b.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => ({ name: d.name, kind: "function", description: d.description, parameters: d.parameters ?? d.parametersJsonSchema, raw: d })));
    case "openai-responses":
      return (b.tools ?? []).map((t: any) => ({ name: t.name, kind: t.type, description: t.description, parameters: t.parameters, raw: t }));
    default:
      return [];
  }
}

/** The tool calls and tool results in an upstream request's history, in its own format. */
function history(req: ReceivedRequest): { calls: Array<{ id?: string; name: string; args: unknown }>; results: Array<{ id?: string; text: string }> } {
  const b = req.body;
  const calls: Array<{ id?: string; name: string; args: unknown }> = [];
  const results: Array<{ id?: string; text: string }> = [];
  switch (req.format) {
    case "openai-chat":
      for (const m of b.messages) {
        for (const tc of m.tool_calls ?? []) calls.push({ id: tc.id, name: tc.function.name, args: JSON.parse(tc.function.arguments) });
        if (m.role === "tool") results.push({ id: m.tool_call_id, text: typeof m.content === "string" ? m.content : JSON.stringify(m.content) });
      }
      break;
    case "anthropic-messages":
      for (const m of b.messages)
        for (const blk of Array.isArray(m.content) ? m.content : []) {
          if (blk.type === "tool_use") calls.push({ id: blk.id, name: blk.name, args: blk.input });
          if (blk.type === "tool_result") results.push({ id: blk.tool_use_id, text: typeof blk.content === "string" ? blk.content : blk.content.map((c: any) => c.text).join("") });
        }
      break;
    case "gemini":
      for (const c of b.contents)
        for (const p of c.parts) {
          if (p.functionCall) calls.push({ id: p.functionCall.id, name: p.functionCall.name, args: p.functionCall.args });
          if (p.functionResponse) results.push({ id: p.functionResponse.id, text: JSON.stringify(p.functionResponse.response) });
        }
      break;
    case "openai-responses":
      for (const it of b.input) {
        if (it.type === "custom_tool_call") calls.push({ id: it.call_id, name: it.name, args: { input: it.input } });
        if (it.type === "custom_tool_call_output") results.push({ id: it.call_id, text: it.output });
      }
      break;
  }
  return { calls, results };
}

describe("Codex freeform apply_patch (custom tool) across provider formats", () => {
  for (const lane of LANES) {
    describe(lane.name, () => {
      test("the upstream is offered the tool; its call reaches the SDK as a custom_tool_call with the exact raw patch (stream)", async () => {
        // The native lane passes the client's bytes and the upstream's events through: the fake answers in Responses' own custom_tool_call shape.
        gw.fake.handle((r) =>
          lane.format === "openai-responses" ? { sse: responsesCustomCallSse(PATCH) } : simpleReply(r.format!, { toolCalls: [{ id: "call_patch_1", name: "apply_patch", arguments: { input: PATCH } }] }, r.stream),
        );
        const stream = client().responses.stream({ model: lane.model, input: "Change the greeting.", tools: [EXEC, APPLY_PATCH] as never, store: false });
        const events: any[] = [];
        for await (const ev of stream) events.push(ev);
        const final = await stream.finalResponse();

        const [req] = gw.fake.requests;
        const tools = declaredTools(req);
        const tool = tools.find((t) => t.name === "apply_patch")!;
        expect(tools.map((t) => t.name)).toEqual(["exec_command", "apply_patch"]);
        if (lane.format === "openai-responses") {
          expect(tool.raw).toEqual(APPLY_PATCH);
        } else {
          expect(tool.kind).toBe("function");
          // (Gemini writes schema types in capitals: OBJECT, STRING.)
          const params = JSON.parse(JSON.stringify(tool.parameters).replace(/"(OBJECT|STRING)"/g, (m) => m.toLowerCase()));
          expect(params).toMatchObject({ type: "object", properties: { input: { type: "string" } }, required: ["input"] });
          expect(tool.description).toContain(APPLY_PATCH.description);
          expect(tool.description).toContain("as the string argument `input`");
          expect(tool.description).toContain("start: begin_patch hunk+ end_patch");
        }

        const items = final.output.filter((o: any) => o.type !== "reasoning");
        expect(items).toHaveLength(1);
        expect(items[0]).toMatchObject({ type: "custom_tool_call", name: "apply_patch", input: PATCH });
        expect(typeof (items[0] as any).call_id).toBe("string");
        const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
        expect(done).toContainEqual(expect.objectContaining({ type: "custom_tool_call", name: "apply_patch", input: PATCH }));
      });

      test("whole (non-streamed) reply: the same custom_tool_call", async () => {
        gw.fake.handle((r) =>
          lane.format === "openai-responses"
            ? { json: { id: "resp_1", object: "response", status: "completed", model: "gpt-x", output: [{ id: "ctc_1", type: "custom_tool_call", status: "completed", call_id: "call_patch_1", name: "apply_patch", input: PATCH }], usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } } }
            : simpleReply(r.format!, { toolCalls: [{ id: "call_patch_1", name: "apply_patch", arguments: { input: PATCH } }] }, r.stream),
        );
        const r = await client().responses.create({ model: lane.model, input: "Change the greeting.", tools: [APPLY_PATCH] as never, store: false });
        expect(r.output.filter((o: any) => o.type !== "reasoning")).toEqual([expect.objectContaining({ type: "custom_tool_call", name: "apply_patch", input: PATCH, call_id: expect.any(String) })]);
      });

      test("history: a custom_tool_call and its output reach the provider as its own tool call (with the raw patch) and result", async () => {
        gw.fake.handle((r) => simpleReply(r.format!, { text: "Patched." }, r.stream));
        const r = await client().responses.create({
          model: lane.model,
          store: false,
          tools: [APPLY_PATCH] as never,
          input: [
            { role: "user", content: "Change the greeting." },
            { type: "custom_tool_call", call_id: "call_patch_1", name: "apply_patch", input: PATCH },
            { type: "custom_tool_call_output", call_id: "call_patch_1", output: "Success. Updated the following files:\nM src/app.ts\n" },
          ] as never,
        });
        expect(r.output_text).toBe("Patched.");
        const h = history(gw.fake.requests[0]);
        expect(h.calls).toHaveLength(1);
        expect(h.calls[0]).toMatchObject({ name: "apply_patch", args: { input: PATCH } });
        expect(h.results).toHaveLength(1);
        expect(h.results[0].text).toContain("Success. Updated the following files:");
        if (lane.format !== "gemini") expect(h.results[0].id).toBe(h.calls[0].id);
      });
    });
  }
});

describe("Codex local_shell across provider formats", () => {
  const LOCAL_SHELL = { type: "local_shell" };
  for (const lane of LANES.filter((l) => l.format !== "openai-responses")) {
    test(`${lane.name}: offered as a local_shell function; the call reaches the SDK as a local_shell_call exec action; history goes back as the provider's tool call`, async () => {
      gw.fake.handle((r) => simpleReply(r.format!, { toolCalls: [{ id: "call_sh_1", name: "local_shell", arguments: { command: ["ls", "-la"], workdir: "/srv/app", timeout_ms: 5000 } }] }, r.stream));
      const stream = client().responses.stream({ model: lane.model, input: "List the files.", tools: [LOCAL_SHELL] as never, store: false });
      for await (const _ of stream) {
        /* drain */
      }
      const final = await stream.finalResponse();
      const tool = declaredTools(gw.fake.requests[0]).find((t) => t.name === "local_shell")!;
      expect(tool.kind).toBe("function");
      expect(JSON.stringify(tool.parameters).toLowerCase()).toContain('"command":{"type":"array"');
      expect(final.output).toEqual([
        expect.objectContaining({ type: "local_shell_call", call_id: lane.format === "gemini" ? expect.any(String) : "call_sh_1", status: "completed", action: { type: "exec", command: ["ls", "-la"], working_directory: "/srv/app", timeout_ms: 5000, env: {}, user: null } }),
      ]);

      gw.fake.reset();
      gw.fake.handle((r) => simpleReply(r.format!, { text: "Two files." }, r.stream));
      const r = await client().responses.create({
        model: lane.model,
        store: false,
        tools: [LOCAL_SHELL] as never,
        input: [
          { role: "user", content: "List the files." },
          { type: "local_shell_call", id: "lsh_1", call_id: "call_sh_1", status: "completed", action: { type: "exec", command: ["ls", "-la"], working_directory: "/srv/app", timeout_ms: 5000, env: {}, user: null } },
          { type: "local_shell_call_output", call_id: "call_sh_1", output: "a.ts\nb.ts\n" },
        ] as never,
      });
      expect(r.output_text).toBe("Two files.");
      const h = history(gw.fake.requests[0]);
      expect(h.calls).toEqual([expect.objectContaining({ name: "local_shell", args: { command: ["ls", "-la"], workdir: "/srv/app", timeout_ms: 5000 } })]);
      expect(h.results).toHaveLength(1);
      expect(h.results[0].text).toContain("a.ts");
    });
  }
});

describe("Codex namespace tools across provider formats", () => {
  // Two MCP servers' `search`, as Codex 0.171 declares MCP tools: one namespace per server.
  const ns = (name: string, description: string) => ({ type: "namespace", name, description, tools: [{ type: "function", name: "search", description: `Search ${description}.`, strict: false, parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }] });
  const TOOLS = [EXEC, ns("mcp__docs__", "the docs"), ns("mcp__web__", "the web")];
  for (const lane of LANES.filter((l) => l.format !== "openai-responses")) {
    for (const stream of [true, false]) {
      test(`${lane.name}, ${stream ? "streamed" : "whole"}: each search offered once under its namespace, history too; the call of the web one reaches the SDK with namespace mcp__web__`, async () => {
        // The provider calls the web server's search by the name it was offered.
        gw.fake.handle((r) => {
          const name = declaredTools(r).find((t) => t.name.includes("web"))?.name ?? "search";
          return simpleReply(r.format!, { toolCalls: [{ id: "call_web_1", name, arguments: { q: "bun" } }] }, r.stream);
        });
        const input = [
          { role: "user", content: "Search the docs, then the web." },
          { type: "function_call", call_id: "call_docs_1", name: "search", namespace: "mcp__docs__", arguments: '{"q":"bun"}' },
          { type: "function_call_output", call_id: "call_docs_1", output: "nothing in the docs" },
        ];
        const res = await client()
          .responses.create({ model: lane.model, input, tools: TOOLS, store: false, stream } as never)
          .withResponse();
        let output: any[];
        if (stream) {
          const events: any[] = [];
          for await (const ev of res.data as any) events.push(ev);
          output = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
        } else output = (res.data as any).output;

        const req = gw.fake.requests[0]!;
        expect(declaredTools(req).map((t) => t.name)).toEqual(["exec_command", "mcp__docs__search", "mcp__web__search"]);
        expect(history(req).calls.map((c) => c.name)).toEqual(["mcp__docs__search"]);
        const warnings = JSON.parse(res.response.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string }>;
        expect(warnings.filter((w) => w.code === "dropped_tool")).toEqual([]);
        const calls = output.filter((o) => o.type !== "reasoning");
        expect(calls).toEqual([expect.objectContaining({ type: "function_call", name: "search", namespace: "mcp__web__", arguments: '{"q":"bun"}' })]);
      });
    }
  }
});

describe("hosted tools", () => {
  test("web_search cannot run on a Chat provider: it is not sent, and the client is told", async () => {
    gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/qwen-x", input: "news?", tools: [EXEC, { type: "web_search", external_web_access: false }] }),
    });
    expect(res.status).toBe(200);
    expect(declaredTools(gw.fake.requests[0]).map((t) => t.name)).toEqual(["exec_command"]);
    const warnings = JSON.parse(res.headers.get("x-switchyard-warning")!) as Array<{ code: string; message: string }>;
    expect(warnings.some((w) => w.code === "dropped_tool" && w.message.includes("web_search"))).toBe(true);
  });
});

/** A Responses stream whose one output item is a custom_tool_call of apply_patch carrying `input`. */
function responsesCustomCallSse(input: string): string {
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const base = { id: "resp_native_1", object: "response", created_at: 1, model: "gpt-x", output: [] as unknown[], status: "in_progress" };
  const item = { id: "ctc_native_1", type: "custom_tool_call", status: "completed", call_id: "call_patch_1", name: "apply_patch", input };
  return (
    ev("response.created", { response: base }) +
    ev("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", input: "" } }) +
    ev("response.custom_tool_call_input.delta", { output_index: 0, item_id: item.id, delta: input }) +
    ev("response.custom_tool_call_input.done", { output_index: 0, item_id: item.id, input }) +
    ev("response.output_item.done", { output_index: 0, item }) +
    ev("response.completed", { response: { ...base, status: "completed", output: [item], usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } } })
  );
}
