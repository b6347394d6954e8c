/**
 * Codex `namespace` tools (`{type:"namespace", name:"mcp__docs__", tools:[…functions]}`, Codex 0.171's
 * way of grouping MCP servers' and its own tools) to providers without namespaces — Chat, Anthropic,
 * Gemini (formats/tool-kinds.ts `flatNamespaces`): each member goes under one flat name that keeps its
 * namespace (`mcp__docs__search`), so two servers' `search` are two tools; history calls carry the same
 * name; no `dropped_tool` warning names a namespace whose functions were sent; and the provider's call
 * of a flat name reaches the Codex client as `name` + `namespace`, as a passthrough Responses provider's
 * namespaced call does (streamed and whole). A flat name a provider refuses (too long for OpenAI, a dot
 * for Anthropic) is mapped and mapped back. Until 2026-12-07 both members went as `search` (a duplicate
 * name providers refuse), both namespaces were reported dropped, and a call could only go back to the
 * last namespace.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { EventNormalizer } from "../../formats/normalize.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import type { HubEvent, ProviderFamily, WireFormat } from "../../formats/hub.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { parseSse } from "../support/openai-responses-helpers.ts";
import { translateBody } from "../support/translate-body.ts";

const SCHEMA = { type: "object", properties: { q: { type: "string" } } };
const member = (name: string) => ({ type: "function", name, description: `${name} it`, parameters: SCHEMA });
/** A namespace name that, flattened with `search_documents_by_semantic_similarity`, is 79 characters. */
const LONG_NS = "mcp__claude_ai_company_knowledge_base__";
const LONG_MEMBER = "search_documents_by_semantic_similarity";
const LONG_FLAT = `mcp__claude_ai_company_knowledge_base__${LONG_MEMBER}`;

/** A Codex turn: two namespaces with a `search` each, a plain tool, and an answered call of mcp__docs__ search. */
const codexBody = {
  model: "gpt-5.5",
  input: [
    { type: "message", role: "user", content: "find it" },
    { type: "function_call", call_id: "call_1", name: "search", namespace: "mcp__docs__", arguments: '{"q":"a"}' },
    { type: "function_call_output", call_id: "call_1", output: "found" },
  ],
  tools: [
    { type: "function", name: "exec_command", parameters: SCHEMA },
    { type: "namespace", name: "mcp__docs__", description: "Docs server", tools: [member("search")] },
    { type: "namespace", name: "mcp__web__", description: "Web server", tools: [member("search")] },
    { type: "namespace", name: LONG_NS, description: "Knowledge base", tools: [member(LONG_MEMBER)] },
    { type: "namespace", name: "docker.io", description: "Docker", tools: [member("list")] },
  ],
};

const TARGETS: Array<{ to: WireFormat; kind: "openai" | "anthropic" | "gemini"; family: ProviderFamily }> = [
  { to: "openai-chat", kind: "openai", family: "openai" },
  { to: "anthropic-messages", kind: "anthropic", family: "anthropic" },
  { to: "gemini", kind: "gemini", family: "gemini" },
];

/** Declared function names, history call names and tool-result names (Gemini) of a provider body. */
function namesOf(to: WireFormat, b: Record<string, any>): { declared: string[]; called: string[]; answered: string[] } {
  if (to === "openai-chat") {
    return { declared: b.tools.map((t: any) => t.function.name), called: b.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.function.name)), answered: [] };
  }
  if (to === "anthropic-messages") {
    const blocks = b.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
    return { declared: b.tools.map((t: any) => t.name), called: blocks.filter((x: any) => x.type === "tool_use").map((x: any) => x.name), answered: [] };
  }
  const parts = b.contents.flatMap((c: any) => c.parts);
  return {
    declared: b.tools.flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => d.name)),
    called: parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall.name),
    answered: parts.filter((p: any) => p.functionResponse).map((p: any) => p.functionResponse.name),
  };
}

/** What each target declares for LONG_FLAT and docker.io__list under its own name rule. */
function expectedNames(to: WireFormat, declared: string[]): { long: string; docker: string } {
  if (to === "openai-chat") {
    const long = declared[3]!;
    expect(long).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(long).toStartWith(LONG_FLAT.slice(0, 55) + "_");
    return { long, docker: "docker_io__list" };
  }
  if (to === "anthropic-messages") return { long: LONG_FLAT, docker: "docker_io__list" };
  return { long: LONG_FLAT, docker: "docker.io__list" };
}

describe("Codex namespace members reach providers without namespaces under flat names", () => {
  for (const t of TARGETS) {
    test(`${t.kind}: each member declared once under namespace + name, history the same, no false dropped warning`, () => {
      const built = translateBody("openai-responses", codexBody, t.to, t.kind);
      const n = namesOf(t.to, built.body);
      const { long, docker } = expectedNames(t.to, n.declared);
      expect(n.declared).toEqual(["exec_command", "mcp__docs__search", "mcp__web__search", long, docker]);
      expect(new Set(n.declared).size).toBe(n.declared.length);
      expect(n.called).toEqual(["mcp__docs__search"]);
      if (t.to === "gemini") expect(n.answered).toEqual(["mcp__docs__search"]);
      expect(built.warnings.filter((w) => w.code === "dropped_tool")).toEqual([]);
      // Only the names the provider's rule refuses are mapped, and mapped back to the flat name.
      const back: Record<string, string> = {};
      if (long !== LONG_FLAT) back[long] = LONG_FLAT;
      if (docker !== "docker.io__list") back[docker] = "docker.io__list";
      expect(built.decoderHints?.toolNames ?? {}).toEqual(back);
    });

    for (const stream of [true, false]) {
      test(`${t.kind}, ${stream ? "streamed" : "whole"}: the provider's call of a flat name reaches Codex as name + namespace`, () => {
        const built = translateBody("openai-responses", codexBody, t.to, t.kind);
        const { long, docker } = expectedNames(t.to, namesOf(t.to, built.body).declared);
        const calls = [
          { id: "call_a", name: "mcp__web__search", arguments: { q: "b" } },
          { id: "call_b", name: long, arguments: { q: "c" } },
          { id: "call_c", name: docker, arguments: {} },
          { id: "call_d", name: "exec_command", arguments: { q: "ls" } },
        ];
        const reply = simpleReply(t.to as "openai-chat", { toolCalls: calls }, stream);
        const opts = { family: t.family, ...built.decoderHints };
        const request = codecFor("openai-responses").parseRequest!(codexBody);
        let items: any[];
        if (stream) {
          let out = "";
          const enc = openaiResponses.createEncoder!({ model: "gpt-5.5", request }, (s) => (out += s));
          const norm = new EventNormalizer((e: HubEvent) => enc.event(e));
          const dec = codecFor(t.to).createDecoder(opts, (e) => norm.event(e));
          dec.push(new TextEncoder().encode(reply.sse!));
          dec.end();
          norm.end();
          enc.end();
          const wire = parseSse(out);
          items = wire.filter((w) => w.event === "response.output_item.done").map((w) => w.data.item);
          const added = wire.filter((w) => w.event === "response.output_item.added").map((w) => w.data.item);
          expect(added.map((i: any) => [i.name, i.namespace])).toEqual(items.map((i: any) => [i.name, i.namespace]));
        } else {
          const resp = codecFor(t.to).decodeResponse(reply.json, opts);
          items = (openaiResponses.encodeResponse!(resp, { model: "gpt-5.5", request }) as any).output;
        }
        expect(items.map((i: any) => ({ type: i.type, name: i.name, namespace: i.namespace }))).toEqual([
          { type: "function_call", name: "search", namespace: "mcp__web__" },
          { type: "function_call", name: LONG_MEMBER, namespace: LONG_NS },
          { type: "function_call", name: "list", namespace: "docker.io" },
          { type: "function_call", name: "exec_command", namespace: undefined },
        ]);
        expect(JSON.parse(items[0].arguments)).toEqual({ q: "b" });
      });
    }
  }
});

/** The function names a provider body's tool choice names (Chat tool_choice, Anthropic tool_choice, Gemini allowedFunctionNames). */
function choiceOf(to: WireFormat, b: Record<string, any>): string[] {
  if (to === "openai-chat") return b.tool_choice?.function ? [b.tool_choice.function.name] : [];
  if (to === "anthropic-messages") return b.tool_choice?.name ? [b.tool_choice.name] : [];
  return b.toolConfig?.functionCallingConfig?.allowedFunctionNames ?? [];
}

describe("a tool_choice naming a namespace's function by its bare name", () => {
  for (const t of TARGETS) {
    test(`${t.kind}: names the flat name the function was declared by`, () => {
      const body = { model: "m", input: "hi", tools: [codexBody.tools[0], codexBody.tools[1]], tool_choice: { type: "function", name: "search" } };
      const built = translateBody("openai-responses", body, t.to, t.kind);
      expect(namesOf(t.to, built.body).declared).toEqual(["exec_command", "mcp__docs__search"]);
      expect(choiceOf(t.to, built.body)).toEqual(["mcp__docs__search"]);
    });
  }
});

describe("what stays as it was", () => {
  test("a namespace with a member neither a function nor a custom tool is still reported for that member", () => {
    const body = { model: "m", input: "hi", tools: [{ type: "namespace", name: "ns", description: "d", tools: [member("search"), { type: "mystery", name: "odd" }] }] };
    const built = translateBody("openai-responses", body, "openai-chat", "openai");
    expect(namesOf("openai-chat", built.body).declared).toEqual(["ns__search"]);
    expect(built.warnings.filter((w) => w.code === "dropped_tool").length).toBe(1);
  });

  test("a Responses provider still gets the namespace itself, its member under its own name", () => {
    const built = translateBody("openai-responses", codexBody, "openai-responses", "openai-responses");
    const tools = (built.body as any).tools;
    expect(tools[1]).toMatchObject({ type: "namespace", name: "mcp__docs__", tools: [{ type: "function", name: "search" }] });
    expect((built.body as any).input[1]).toMatchObject({ type: "function_call", name: "search", namespace: "mcp__docs__" });
  });
});

/**
 * Flat names that would clash: a plain `ns__search` beside namespace `ns`'s `search`, and namespaces
 * `a` and `a_` (both flatten to `a__x`). Until 2026-12-07 both went to the provider under one name
 * (`["ns__search","ns__search"]`, a duplicate providers refuse) with no warning, and a call of it
 * went back as whichever was looked up first.
 */
const clashBody = {
  model: "m",
  input: [
    { type: "message", role: "user", content: "hi" },
    { type: "function_call", call_id: "call_1", name: "search", namespace: "ns", arguments: '{"q":"a"}' },
    { type: "function_call_output", call_id: "call_1", output: "one" },
    { type: "function_call", call_id: "call_2", name: "ns__search", arguments: '{"q":"b"}' },
    { type: "function_call_output", call_id: "call_2", output: "two" },
    { type: "function_call", call_id: "call_3", name: "x", namespace: "a_", arguments: "{}" },
    { type: "function_call_output", call_id: "call_3", output: "three" },
  ],
  tools: [
    { type: "function", name: "ns__search", parameters: SCHEMA },
    { type: "namespace", name: "ns", description: "d", tools: [member("search")] },
    { type: "namespace", name: "a", description: "A", tools: [member("x")] },
    { type: "namespace", name: "a_", description: "A_", tools: [member("x")] },
  ],
};

/** The Responses output items Codex gets for a provider reply calling `calls` (streamed or whole). */
function replyItems(t: (typeof TARGETS)[number], body: any, calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>, stream: boolean): any[] {
  const built = translateBody("openai-responses", body, t.to, t.kind);
  const reply = simpleReply(t.to as "openai-chat", { toolCalls: calls }, stream);
  const opts = { family: t.family, ...built.decoderHints };
  const request = codecFor("openai-responses").parseRequest!(body);
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
  const items = wire.filter((w) => w.event === "response.output_item.done").map((w) => w.data.item);
  const added = wire.filter((w) => w.event === "response.output_item.added").map((w) => w.data.item);
  expect(added.map((i: any) => [i.name, i.namespace])).toEqual(items.map((i: any) => [i.name, i.namespace]));
  return items;
}

describe("flat names that would clash get a numeric suffix, and calls map back to the right tool", () => {
  for (const t of TARGETS) {
    test(`${t.kind}: a plain ns__search and ns's search, a's and a_'s x are four distinct names, history the same`, () => {
      const built = translateBody("openai-responses", clashBody, t.to, t.kind);
      const n = namesOf(t.to, built.body);
      expect(n.declared).toEqual(["ns__search", "ns__search_2", "a__x", "a__x_2"]);
      expect(n.called).toEqual(["ns__search_2", "ns__search", "a__x_2"]);
      if (t.to === "gemini") expect(n.answered).toEqual(["ns__search_2", "ns__search", "a__x_2"]);
      expect(built.warnings.filter((w) => w.code === "dropped_tool")).toEqual([]);
    });

    test(`${t.kind}: the repro from the issue (plain ns__search, then namespace ns with search) declares two names`, () => {
      const body = { model: "m", input: "hi", tools: [clashBody.tools[0], clashBody.tools[1]] };
      expect(namesOf(t.to, translateBody("openai-responses", body, t.to, t.kind).body).declared).toEqual(["ns__search", "ns__search_2"]);
    });

    for (const stream of [true, false]) {
      test(`${t.kind}, ${stream ? "streamed" : "whole"}: each suffixed or plain name reaches Codex as its own tool`, () => {
        const items = replyItems(t, clashBody, [
          { id: "call_a", name: "ns__search", arguments: { q: "plain" } },
          { id: "call_b", name: "ns__search_2", arguments: { q: "spaced" } },
          { id: "call_c", name: "a__x", arguments: {} },
          { id: "call_d", name: "a__x_2", arguments: {} },
        ], stream);
        expect(items.map((i: any) => ({ type: i.type, name: i.name, namespace: i.namespace }))).toEqual([
          { type: "function_call", name: "ns__search", namespace: undefined },
          { type: "function_call", name: "search", namespace: "ns" },
          { type: "function_call", name: "x", namespace: "a" },
          { type: "function_call", name: "x", namespace: "a_" },
        ]);
        expect(JSON.parse(items[1].arguments)).toEqual({ q: "spaced" });
      });
    }
  }
});

/** Namespace `x`'s member `a__b` (bare name) and namespace `a`'s `b` (flat name `a__b`). */
const crossBody = {
  model: "m",
  input: "hi",
  tools: [
    { type: "namespace", name: "x", description: "X", tools: [member("a__b")] },
    { type: "namespace", name: "a", description: "A", tools: [member("b")] },
  ],
};

describe("a flat name that is also another namespace's bare member name", () => {
  for (const t of TARGETS) {
    for (const stream of [true, false]) {
      test(`${t.kind}, ${stream ? "streamed" : "whole"}: the call of a__b goes to a's b, x__a__b to x's a__b`, () => {
        expect(namesOf(t.to, translateBody("openai-responses", crossBody, t.to, t.kind).body).declared).toEqual(["x__a__b", "a__b"]);
        const items = replyItems(t, crossBody, [
          { id: "call_a", name: "a__b", arguments: {} },
          { id: "call_b", name: "x__a__b", arguments: {} },
        ], stream);
        expect(items.map((i: any) => [i.name, i.namespace])).toEqual([["b", "a"], ["a__b", "x"]]);
      });
    }
  }

  test("a Responses provider's call that carries its namespace names the member itself, not a flat name", () => {
    const request = codecFor("openai-responses").parseRequest!(crossBody);
    const reply = {
      id: "resp_1", object: "response", created_at: 1, status: "completed", model: "m",
      output: [{ type: "function_call", id: "fc_1", call_id: "call_1", name: "a__b", namespace: "x", arguments: "{}", status: "completed" }],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
    };
    const resp = codecFor("openai-responses").decodeResponse(reply, { family: "openai" });
    const items = (openaiResponses.encodeResponse!(resp, { model: "m", request }) as any).output;
    expect(items.map((i: any) => [i.type, i.name, i.namespace])).toEqual([["function_call", "a__b", "x"]]);
  });
});
