/**
 * What a Codex `namespace` tool carries besides its functions' names, on providers without namespaces
 * (Chat, Anthropic, Gemini; formats/tool-kinds.ts `flatNamespaces`):
 * - the namespace's own description reaches the model, before each member's description (until
 *   2026-12-07 it was not sent at all);
 * - a `custom` (freeform) member becomes the function a top-level `custom` tool becomes (one string
 *   argument `input`, its grammar in the description) under its flat name, in history too, and a
 *   provider's call of it reaches Codex as `custom_tool_call` with the raw input and the namespace
 *   (until 2026-12-07 it was dropped with a `dropped_tool` warning);
 * - a `tool_choice` naming a member by a bare name two namespaces share is refused with a 400 naming
 *   the namespaces (until 2026-12-07 the bare name went on, a tool no provider had been declared).
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { EventNormalizer } from "../../formats/normalize.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { FormatError, type HubEvent, type ProviderFamily, type WireFormat } from "../../formats/hub.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { parseSse } from "../support/openai-responses-helpers.ts";
import { translateBody } from "../support/translate-body.ts";

const SCHEMA = { type: "object", properties: { q: { type: "string" } } };
const GRAMMAR = 'start: "go " /[a-z]+/';

/** A Codex turn: namespace `mcp__docs__` (described) with a function and a custom member, an undescribed namespace, and history calling both members. */
const body = {
  model: "gpt-5.5",
  input: [
    { type: "message", role: "user", content: "find it" },
    { type: "function_call", call_id: "call_1", name: "search", namespace: "mcp__docs__", arguments: '{"q":"a"}' },
    { type: "function_call_output", call_id: "call_1", output: "found" },
    { type: "custom_tool_call", call_id: "call_2", name: "run", namespace: "mcp__docs__", input: "go fast" },
    { type: "custom_tool_call_output", call_id: "call_2", output: "ran" },
  ],
  tools: [
    { type: "function", name: "exec_command", description: "Runs a command.", parameters: SCHEMA },
    {
      type: "namespace",
      name: "mcp__docs__",
      description: "Tools of the docs server.",
      tools: [
        { type: "function", name: "search", description: "Searches the docs.", parameters: SCHEMA },
        { type: "custom", name: "run", description: "Runs a docs script.", format: { type: "grammar", syntax: "lark", definition: GRAMMAR } },
        { type: "function", name: "bare", parameters: SCHEMA },
      ],
    },
    { type: "namespace", name: "quiet", tools: [{ type: "function", name: "ping", description: "Pings.", parameters: SCHEMA }] },
  ],
};

const TARGETS: Array<{ to: WireFormat; kind: "openai" | "anthropic" | "gemini"; family: ProviderFamily }> = [
  { to: "openai-chat", kind: "openai", family: "openai" },
  { to: "anthropic-messages", kind: "anthropic", family: "anthropic" },
  { to: "gemini", kind: "gemini", family: "gemini" },
];

/** Declared tools (name, description, parameters) and history calls (name, arguments as an object) of a provider body. */
function toolsOf(to: WireFormat, b: Record<string, any>): { declared: Array<{ name: string; description?: string; parameters: any }>; called: Array<{ name: string; args: unknown }> } {
  if (to === "openai-chat") {
    return {
      declared: b.tools.map((t: any) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters })),
      called: b.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) }))),
    };
  }
  if (to === "anthropic-messages") {
    const blocks = b.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
    return {
      declared: b.tools.map((t: any) => ({ name: t.name, description: t.description, parameters: t.input_schema })),
      called: blocks.filter((x: any) => x.type === "tool_use").map((x: any) => ({ name: x.name, args: x.input })),
    };
  }
  const parts = b.contents.flatMap((c: any) => c.parts);
  return {
    declared: b.tools.flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => ({ name: d.name, description: d.description, parameters: d.parameters ?? d.parametersJsonSchema }))),
    called: parts.filter((p: any) => p.functionCall).map((p: any) => ({ name: p.functionCall.name, args: p.functionCall.args })),
  };
}

describe("a namespace's own description reaches providers without namespaces", () => {
  for (const t of TARGETS) {
    test(`${t.kind}: before each member's description, alone for a member without one, nothing added for a namespace without one`, () => {
      const built = translateBody("openai-responses", body, t.to, t.kind);
      const d = Object.fromEntries(toolsOf(t.to, built.body).declared.map((x) => [x.name, x.description]));
      expect(d.exec_command).toBe("Runs a command.");
      expect(d.mcp__docs__search).toBe("Tools of the docs server.\n\nSearches the docs.");
      expect(d.mcp__docs__bare).toBe("Tools of the docs server.");
      expect(d.quiet__ping).toBe("Pings.");
      // The same request gives the same bytes (prompt caches).
      expect(JSON.stringify(translateBody("openai-responses", body, t.to, t.kind).body)).toBe(JSON.stringify(built.body));
    });
  }
});

/** The Responses output items Codex gets for a provider reply calling `calls` (streamed or whole). */
function replyItems(t: (typeof TARGETS)[number], req: any, calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>, stream: boolean): any[] {
  const built = translateBody("openai-responses", req, t.to, t.kind);
  const reply = simpleReply(t.to as "openai-chat", { toolCalls: calls }, stream);
  const opts = { family: t.family, ...built.decoderHints };
  const request = codecFor("openai-responses").parseRequest!(req);
  if (!stream) {
    const resp = codecFor(t.to).decodeResponse(reply.json, opts);
    return (openaiResponses.encodeResponse!(resp, { model: "m", request }) as any).output;
  }
  let out = "";
  const enc = openaiResponses.createEncoder!({ model: "m", request }, (s) => (out += s));
  const norm = new EventNormalizer((e: HubEvent) => enc.event(e));
  const dec = codecFor(t.to).createDecoder(opts, (e) => norm.event(e));
  dec.push(new TextEncoder().encode(reply.sse!));
  dec.end();
  norm.end();
  enc.end();
  const wire = parseSse(out);
  const added = wire.filter((w) => w.event === "response.output_item.added").map((w) => w.data.item);
  const items = wire.filter((w) => w.event === "response.output_item.done").map((w) => w.data.item);
  expect(added.map((i: any) => [i.type, i.name, i.namespace])).toEqual(items.map((i: any) => [i.type, i.name, i.namespace]));
  return items;
}

describe("a namespace's custom member is sent as a top-level custom tool is, under its flat name", () => {
  for (const t of TARGETS) {
    test(`${t.kind}: declared as a one-string-argument function, in history under the same name, no dropped_tool warning`, () => {
      const built = translateBody("openai-responses", body, t.to, t.kind);
      const { declared, called } = toolsOf(t.to, built.body);
      const run = declared.find((x) => x.name === "mcp__docs__run");
      expect(run).toBeDefined();
      expect(run!.description).toStartWith("Tools of the docs server.\n\nRuns a docs script.\n\n");
      expect(run!.description).toContain(GRAMMAR);
      expect(Object.keys(run!.parameters.properties)).toEqual(["input"]);
      expect(run!.parameters.required).toEqual(["input"]);
      expect(declared.map((x) => x.name)).toEqual(["exec_command", "mcp__docs__run", "mcp__docs__search", "mcp__docs__bare", "quiet__ping"]);
      expect(called).toEqual([
        { name: "mcp__docs__search", args: { q: "a" } },
        { name: "mcp__docs__run", args: { input: "go fast" } },
      ]);
      expect(built.warnings.filter((w) => w.code === "dropped_tool")).toEqual([]);
    });

    for (const stream of [true, false]) {
      test(`${t.kind}, ${stream ? "streamed" : "whole"}: the provider's call of it reaches Codex as custom_tool_call with the namespace and the raw input`, () => {
        const items = replyItems(t, body, [
          { id: "call_a", name: "mcp__docs__run", arguments: { input: "go slow" } },
          { id: "call_b", name: "mcp__docs__search", arguments: { q: "b" } },
        ], stream);
        expect(items.map((i: any) => ({ type: i.type, name: i.name, namespace: i.namespace, input: i.input }))).toEqual([
          { type: "custom_tool_call", name: "run", namespace: "mcp__docs__", input: "go slow" },
          { type: "function_call", name: "search", namespace: "mcp__docs__", input: undefined },
        ]);
      });
    }
  }

  test("a custom member and a function of the same name in one namespace are two tools; the function keeps its name", () => {
    const req = {
      model: "m",
      input: "hi",
      tools: [{ type: "namespace", name: "ns", description: "N", tools: [{ type: "custom", name: "x" }, { type: "function", name: "x", parameters: SCHEMA }] }],
    };
    for (const t of TARGETS) {
      expect(toolsOf(t.to, translateBody("openai-responses", req, t.to, t.kind).body).declared.map((x) => x.name)).toEqual(["ns__x_2", "ns__x"]);
      const items = replyItems(t, req, [
        { id: "call_a", name: "ns__x_2", arguments: { input: "raw" } },
        { id: "call_b", name: "ns__x", arguments: { q: "c" } },
      ], false);
      expect(items.map((i: any) => [i.type, i.name, i.namespace])).toEqual([["custom_tool_call", "x", "ns"], ["function_call", "x", "ns"]]);
    }
  });

  test("a Responses provider gets the custom member in its namespace and the history call with its namespace; its call keeps it", () => {
    const built = translateBody("openai-responses", body, "openai-responses", "openai-responses");
    const b = built.body as any;
    expect(b.tools[1].tools.map((m: any) => [m.type, m.name])).toEqual([["custom", "run"], ["function", "search"], ["function", "bare"]]);
    expect(b.input.find((i: any) => i.type === "custom_tool_call")).toMatchObject({ name: "run", namespace: "mcp__docs__", input: "go fast" });
    const request = codecFor("openai-responses").parseRequest!(body);
    const reply = {
      id: "resp_1", object: "response", created_at: 1, status: "completed", model: "m",
      output: [{ type: "custom_tool_call", id: "ctc_1", call_id: "call_9", name: "run", namespace: "mcp__docs__", input: "go up", status: "completed" }],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    };
    const resp = codecFor("openai-responses").decodeResponse(reply, { family: "openai" });
    const items = (openaiResponses.encodeResponse!(resp, { model: "m", request }) as any).output;
    expect(items.map((i: any) => [i.type, i.name, i.namespace, i.input])).toEqual([["custom_tool_call", "run", "mcp__docs__", "go up"]]);
  });
});

/** Two namespaces declaring `search`, and a plain `exec_command`. */
const twoSearches = {
  model: "m",
  input: "hi",
  tools: [
    { type: "function", name: "exec_command", parameters: SCHEMA },
    { type: "namespace", name: "mcp__docs__", description: "Docs", tools: [{ type: "function", name: "search", parameters: SCHEMA }] },
    { type: "namespace", name: "mcp__web__", description: "Web", tools: [{ type: "function", name: "search", parameters: SCHEMA }] },
  ],
};

describe("a tool_choice naming a bare name two namespaces share", () => {
  for (const t of TARGETS) {
    for (const choice of [{ type: "function", name: "search" }, { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "search" }] }]) {
      test(`${t.kind}, ${choice.type}: refused with a 400 naming the namespaces, not sent as a tool nobody declared`, () => {
        let err: unknown;
        try {
          translateBody("openai-responses", { ...twoSearches, tool_choice: choice }, t.to, t.kind);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(FormatError);
        const e = (err as FormatError).error;
        expect(e.status).toBe(400);
        expect(e.param).toBe("tool_choice");
        expect(e.message).toContain('"search"');
        expect(e.message).toContain('"mcp__docs__" and "mcp__web__"');
      });
    }
  }

  test("a top-level tool of that name is the one named, on every provider", () => {
    const req = { ...twoSearches, tools: [...twoSearches.tools, { type: "function", name: "search", parameters: SCHEMA }], tool_choice: { type: "function", name: "search" } };
    const b = translateBody("openai-responses", req, "anthropic-messages", "anthropic").body as any;
    expect(b.tool_choice).toEqual({ type: "tool", name: "search" });
  });

  test("a Responses provider gets the choice and the namespaces as they came", () => {
    const b = translateBody("openai-responses", { ...twoSearches, tool_choice: { type: "function", name: "search" } }, "openai-responses", "openai-responses").body as any;
    expect(b.tool_choice).toEqual({ type: "function", name: "search" });
  });

  test("a custom member named by a custom tool_choice names its flat name", () => {
    const b = translateBody("openai-responses", { ...body, input: "hi", tool_choice: { type: "custom", name: "run" } }, "anthropic-messages", "anthropic").body as any;
    expect(b.tool_choice).toEqual({ type: "tool", name: "mcp__docs__run" });
  });
});
