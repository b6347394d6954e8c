/**
 * A Codex namespace declared twice (two `{type:"namespace", name:"ns"}` tools, each holding a function
 * `search` and a `custom` member `patch`) on providers without namespaces (Chat, Anthropic, Gemini;
 * formats/tool-kinds.ts `flatNamespaces`): each member is declared once, as first declared, and a
 * `dropped_tool` warning names it. Until 2026-12-07 `ns__search` and `ns__patch` went twice (Anthropic
 * refuses two tools of one name).
 *
 * A Responses provider gets it so too where switchyard writes the body (the Codex backend's lane, the
 * tidy lane a body carrying another provider's reasoning state takes to OpenAI, a body built from the
 * hub): one `namespace` tool, as
 * first declared, each member once (a function and a `custom` member of one name are two members),
 * the same warnings. Until 2026-12-07 those lanes sent both declarations as the client did. The native
 * lane of kinds `openai` / `openai-responses` sends the client's bytes as they are (SPEC F-3), so there
 * it still goes as sent.
 */
import { expect, test } from "bun:test";
import type { WireFormat } from "../../formats/hub.ts";
import type { BuildTarget } from "../../formats/codec.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
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

/** The one namespace a Responses provider should get: the first declaration, each member once (a function and a custom member may share a name). */
const ONCE = [
  {
    type: "namespace",
    name: "ns",
    tools: [
      { type: "function", name: "search", description: "First search.", parameters: SCHEMA },
      { type: "custom", name: "patch", description: "First patch." },
      { type: "function", name: "patch", description: "A function patch.", parameters: SCHEMA },
    ],
  },
];
/** {@link body} with a function `patch` beside the second declaration's custom `patch` (a new member: kept). */
const withFunctionPatch = {
  ...body,
  tools: [body.tools[0], { ...body.tools[1], tools: [...body.tools[1]!.tools, { type: "function", name: "patch", description: "A function patch.", parameters: SCHEMA }] }],
};
const TWICE = [
  { code: "dropped_tool", message: 'The namespace "ns" declares the tool "search" more than once; it was declared once, as first declared.' },
  { code: "dropped_tool", message: 'The namespace "ns" declares the tool "patch" more than once; it was declared once, as first declared.' },
];

for (const kind of ["codex", "openai-responses"] as const) {
  test(`responses, kind ${kind} (tidied, no hub): the namespace is declared once, each member once, as first declared, with a warning`, () => {
    const target: BuildTarget = { model: "up-model", kind, family: "openai", stream: true };
    const built = openaiResponses.tidyRequest!(withFunctionPatch, target);
    expect((built.body as any).tools).toEqual(ONCE);
    expect(built.warnings.filter((w) => w.code === "dropped_tool")).toEqual(TWICE);
    expect(withFunctionPatch.tools).toHaveLength(2); // the client's body is not changed
  });
}

test("responses, built from the hub: the namespace is declared once, each member once, with a warning", () => {
  const built = translateBody("openai-responses", withFunctionPatch, "openai-responses", "openai-responses");
  const tools = (built.body as any).tools;
  expect(tools.map((t: any) => [t.type, t.name])).toEqual([["namespace", "ns"]]);
  expect(tools[0].tools.map((m: any) => [m.type, m.name, m.description]).sort()).toEqual([
    ["custom", "patch", "First patch."],
    ["function", "patch", "A function patch."],
    ["function", "search", "First search."],
  ]);
  expect(built.warnings.filter((w) => w.code === "dropped_tool").map((w) => w.message).sort()).toEqual(TWICE.map((w) => w.message).sort());
});

test("responses: a namespace declared once leaves the tools array as the client sent it", () => {
  const once = { ...body, tools: [body.tools[0]] };
  const built = openaiResponses.tidyRequest!(once, { model: "up-model", kind: "codex", family: "openai", stream: true });
  expect((built.body as any).tools).toBe(once.tools);
});
