/**
 * A Codex namespace whose function and `custom` (freeform) member share a name (`ns` holding function
 * `patch` and custom `patch`): a history call of either is read by its item type (`function_call` vs
 * `custom_tool_call`), on every target format. On Chat, Anthropic and Gemini the two members go by
 * two flat names (`ns__patch`, the function's, and `ns__patch_2`, formats/tool-kinds.ts
 * `namespacedToolNames`), and the custom call's history goes under `ns__patch_2` with its `input`; a
 * Responses target built from the hub sends it back as a `custom_tool_call` with its output as a
 * `custom_tool_call_output`. Until 2026-12-07 the custom call was read as the function's (`ns__patch`
 * with `{"input": …}` as a function's arguments; a `function_call` to a Responses target).
 */
import { expect, test } from "bun:test";
import type { WireFormat } from "../../formats/hub.ts";
import { translateBody } from "../support/translate-body.ts";

const SCHEMA = { type: "object", properties: { file: { type: "string" } } };

const body = {
  model: "gpt-5.5",
  input: [
    { type: "message", role: "user", content: "patch both" },
    { type: "function_call", call_id: "call_f", name: "patch", namespace: "ns", arguments: '{"file":"a.ts"}' },
    { type: "function_call_output", call_id: "call_f", output: "function done" },
    { type: "custom_tool_call", call_id: "call_c", name: "patch", namespace: "ns", input: "*** Begin Patch" },
    { type: "custom_tool_call_output", call_id: "call_c", output: "custom done" },
  ],
  tools: [
    {
      type: "namespace",
      name: "ns",
      description: "Patch tools.",
      tools: [
        { type: "function", name: "patch", description: "Patches by file.", parameters: SCHEMA },
        { type: "custom", name: "patch", description: "Patches freeform." },
      ],
    },
  ],
};

/** The history calls of a provider body: name and arguments, in order. */
function calls(to: WireFormat, b: Record<string, any>): Array<[string, unknown]> {
  if (to === "openai-chat") return b.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => [c.function.name, JSON.parse(c.function.arguments)]));
  if (to === "anthropic-messages") {
    return b.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((x: any) => x.type === "tool_use").map((x: any) => [x.name, x.input]);
  }
  return b.contents.flatMap((c: any) => c.parts).filter((p: any) => p.functionCall).map((p: any) => [p.functionCall.name, p.functionCall.args]);
}

/** The declared tool names of a provider body. */
function declared(to: WireFormat, b: Record<string, any>): string[] {
  if (to === "openai-chat") return b.tools.map((t: any) => t.function.name);
  if (to === "anthropic-messages") return b.tools.map((t: any) => t.name);
  return b.tools.flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => d.name));
}

for (const [to, kind] of [
  ["openai-chat", "openai"],
  ["anthropic-messages", "anthropic"],
  ["gemini", "gemini"],
] as const) {
  test(`${kind}: the custom member's history call goes under the custom member's flat name, the function's under the function's`, () => {
    const built = translateBody("openai-responses", body, to, kind);
    expect(declared(to, built.body).sort()).toEqual(["ns__patch", "ns__patch_2"]);
    expect(calls(to, built.body)).toEqual([
      ["ns__patch", { file: "a.ts" }],
      ["ns__patch_2", { input: "*** Begin Patch" }],
    ]);
  });
}

test("openai-responses (built from the hub): the custom call goes back as a custom_tool_call with its output as custom_tool_call_output", () => {
  const built = translateBody("openai-responses", body, "openai-responses", "openai-responses");
  const items = (built.body as any).input.filter((i: any) => i.type !== "message");
  expect(items.map((i: any) => [i.type, i.call_id, i.namespace ?? null, i.name ?? null])).toEqual([
    ["function_call", "call_f", "ns", "patch"],
    ["function_call_output", "call_f", null, null],
    ["custom_tool_call", "call_c", "ns", "patch"],
    ["custom_tool_call_output", "call_c", null, null],
  ]);
  expect(items[2].input).toBe("*** Begin Patch");
  expect(items[3].output).toBe("custom done");
});
