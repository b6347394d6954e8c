/**
 * A Codex namespace declared twice (two `{type:"namespace", name:"ns"}` tools, each holding a function
 * `search` and a `custom` member `patch`) on providers without namespaces (Chat, Anthropic, Gemini;
 * formats/tool-kinds.ts `flatNamespaces`): each member is declared once, as first declared, and a
 * `dropped_tool` warning names it. Until 2026-12-07 `ns__search` and `ns__patch` went twice (Anthropic
 * refuses two tools of one name).
 */
import { expect, test } from "bun:test";
import type { WireFormat } from "../../formats/hub.ts";
import { translateBody } from "../support/translate-body.ts";

const SCHEMA = { type: "object", properties: { q: { type: "string" } } };

const body = {
  model: "gpt-5.5",
  input: [
    { type: "message", role: "user", content: "find it" },
    { type: "function_call", call_id: "call_1", name: "search", namespace: "ns", arguments: '{"q":"a"}' },
    { type: "function_call_output", call_id: "call_1", output: "found" },
  ],
  tools: [
    {
      type: "namespace",
      name: "ns",
      tools: [
        { type: "function", name: "search", description: "First search.", parameters: SCHEMA },
        { type: "custom", name: "patch", description: "First patch." },
      ],
    },
    {
      type: "namespace",
      name: "ns",
      tools: [
        { type: "function", name: "search", description: "Second search.", parameters: SCHEMA },
        { type: "custom", name: "patch", description: "Second patch." },
      ],
    },
  ],
};

const TARGETS: Array<{ to: WireFormat; kind: "openai" | "anthropic" | "gemini" }> = [
  { to: "openai-chat", kind: "openai" },
  { to: "anthropic-messages", kind: "anthropic" },
  { to: "gemini", kind: "gemini" },
];

/** Declared tool names and descriptions of a provider body, in order. */
function declared(to: WireFormat, b: Record<string, any>): Array<[string, string]> {
  if (to === "openai-chat") return b.tools.map((t: any) => [t.function.name, t.function.description]);
  if (to === "anthropic-messages") return b.tools.map((t: any) => [t.name, t.description]);
  return b.tools.flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => [d.name, d.description]));
}

for (const t of TARGETS) {
  test(`${t.kind}: each member of a namespace declared twice is declared once, as first declared, with a warning`, () => {
    const built = translateBody("openai-responses", body, t.to, t.kind);
    const tools = declared(t.to, built.body as Record<string, any>);
    expect(tools.map(([n]) => n).sort()).toEqual(["ns__patch", "ns__search"]);
    const d = Object.fromEntries(tools);
    expect(d.ns__search).toBe("First search.");
    expect(d.ns__patch).toStartWith("First patch.");
    const dropped = built.warnings.filter((w) => w.code === "dropped_tool");
    expect(dropped).toEqual([
      { code: "dropped_tool", message: 'The namespace "ns" declares the tool "patch" more than once; it was declared once, as first declared.' },
      { code: "dropped_tool", message: 'The namespace "ns" declares the tool "search" more than once; it was declared once, as first declared.' },
    ]);
    expect(JSON.stringify(built.body)).toContain("ns__search"); // the history call keeps the flat name
  });
}
