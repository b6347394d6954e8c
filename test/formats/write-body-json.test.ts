/**
 * The upstream request body's text with its tools from the memo (formats/write-body-json.ts `bodyJson`,
 * pipeline/translate.ts; docs/performance.md item 115): what a provider receives must be the text
 * `JSON.stringify` of the built body writes, byte for byte, for every recorded client request built
 * for every kind of upstream (translated through the hub, and tidied for the client's own format), on
 * the first turn (written and remembered) and the next ones (from the memo), and an edit anywhere in
 * the tools must show in the text. The memo's compare never takes a value JSON leaves out or changes
 * for the remembered one, and the memo stays within its bounds. (The Responses echo that shares the
 * memo: test/formats/openai-responses/echo-memo.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import { anthropicMessages } from "../../formats/anthropic-messages/index.ts";
import { openaiChat } from "../../formats/openai-chat/index.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { gemini } from "../../formats/gemini/index.ts";
import type { BuildTarget, FormatCodec, ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { bodyJson, matches, snapshotOf, TOOLS_MEMO_ENTRIES, TOOLS_MEMO_MAX_CHARS, toolsMemoSize } from "../../formats/write-body-json.ts";
import { clientRequest } from "../support/fixtures.ts";

const CAPTURES: Array<{ file: string; format: WireFormat }> = [
  { file: "claude-code-default.json", format: "anthropic-messages" },
  { file: "claude-code-prefix.json", format: "anthropic-messages" },
  { file: "claude-code-tool-use-1.json", format: "anthropic-messages" },
  { file: "claude-code-tool-use-2.json", format: "anthropic-messages" },
  { file: "codex-default.json", format: "openai-responses" },
  { file: "codex-tool-use-1.json", format: "openai-responses" },
  { file: "codex-tool-use-2.json", format: "openai-responses" },
];
const CLIENT: Record<string, FormatCodec> = { "anthropic-messages": anthropicMessages, "openai-responses": openaiResponses };
const TARGETS: Array<{ codec: FormatCodec; kind: ProviderKind; family: BuildTarget["family"] }> = [
  { codec: openaiChat, kind: "openai", family: "openai" },
  { codec: openaiChat, kind: "openai-compatible", family: "provider:or" },
  { codec: anthropicMessages, kind: "anthropic", family: "anthropic" },
  { codec: anthropicMessages, kind: "anthropic-compatible", family: "provider:glm" },
  { codec: openaiResponses, kind: "openai-responses", family: "openai" },
  { codec: openaiResponses, kind: "codex", family: "openai" },
  { codec: gemini, kind: "gemini", family: "gemini" },
];

/** The bodies a provider gets for one capture: built through the hub for every target, and tidied in the client's own format. */
async function bodies(file: string, format: WireFormat): Promise<Array<[string, Record<string, unknown>]>> {
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const t of TARGETS) {
    const client = await clientRequest(file);
    const hub = CLIENT[format]!.parseRequest!(client);
    const target: BuildTarget = { model: "m", kind: t.kind, family: t.family, stream: true, defaultMaxOutputTokens: 4096, promptCacheKey: "k" };
    out.push([`built for ${t.kind}`, t.codec.buildRequest({ ...hub, model: "m", stream: true }, target).body]);
  }
  const tidy = CLIENT[format]!.tidyRequest!;
  const kind: ProviderKind = format === "openai-responses" ? "codex" : "claude-code";
  out.push([`tidied for ${kind}`, tidy(await clientRequest(file), { model: "m", kind, family: format === "openai-responses" ? "openai" : "anthropic", stream: true, promptCacheKey: "k" }).body]);
  return out;
}

describe("an upstream body's text with its tools from the memo", () => {
  for (const { file, format } of CAPTURES) {
    test(`${file}: every upstream's body, first and later turns, is JSON.stringify's text`, async () => {
      // Three turns: the first writes (and remembers) the tools, the others read them from the memo.
      for (let turn = 0; turn < 3; turn++) {
        for (const [name, body] of await bodies(file, format)) expect(`${name}: ${bodyJson(body)}`).toBe(`${name}: ${JSON.stringify(body)}`);
      }
    });
  }

  test("an edit deep in a tool, a tool removed or members reordered shows in the text", async () => {
    const [, first] = (await bodies("codex-tool-use-2.json", "openai-responses"))[0]!;
    expect(bodyJson(first)).toBe(JSON.stringify(first));
    const again = async () => (await bodies("codex-tool-use-2.json", "openai-responses"))[0]![1] as { tools: Array<{ function: { parameters: { properties?: Record<string, { description?: string }> } } }> };
    const edited = await again();
    const props = edited.tools.find((t) => t.function.parameters.properties && Object.keys(t.function.parameters.properties).length > 0)!.function.parameters.properties!;
    const key = Object.keys(props)[0]!;
    props[key]!.description = `${props[key]!.description ?? ""}!`;
    expect(bodyJson(edited)).toBe(JSON.stringify(edited));
    const fewer = await again();
    fewer.tools.pop();
    expect(bodyJson(fewer)).toBe(JSON.stringify(fewer));
    const reordered = await again();
    const fn = reordered.tools[0]!.function as Record<string, unknown>;
    const { name, ...rest } = fn;
    reordered.tools[0]!.function = { ...rest, name } as never;
    expect(bodyJson(reordered)).toBe(JSON.stringify(reordered));
  });

  test("bodies without tools, with short tools or with undefined members are JSON.stringify's text", () => {
    const long = "d".repeat(3000);
    const cases: Record<string, unknown>[] = [
      {},
      { model: "m", messages: [] },
      { model: "m", tools: [] },
      { model: "m", tools: [{ type: "function", function: { name: "f", parameters: {} } }] },
      { tools: [{ name: "a", description: long, input_schema: { type: "object", x: undefined } }], after: 1 },
      { model: "m", tools: [{ name: "a", description: long, input_schema: { type: "object" } }, { name: "b", description: long }] },
      { model: "m", tools: [{ name: "a", description: long, input_schema: { type: "object" } }, { name: "b", description: long }], stream: undefined, n: 1 },
    ];
    for (const c of cases) for (let i = 0; i < 2; i++) expect(bodyJson(c)).toBe(JSON.stringify(c));
  });

  test("a value JSON leaves out or changes is a miss, never a wrong hit", () => {
    // The memo keeps a snapshot of the values read back from the text it wrote.
    const snap = (v: unknown) => snapshotOf(JSON.parse(JSON.stringify(v)));
    const base = { a: 1, b: { c: [1, "x", null, true] } };
    const s = (v: unknown) => matches(snap(base), v);
    expect(s({ a: 1, b: { c: [1, "x", null, true] } })).toBe(true);
    expect(s({ a: 1, b: { c: [1, "x", null, true] }, d: undefined })).toBe(false);
    expect(s({ b: { c: [1, "x", null, true] }, a: 1 })).toBe(false);
    expect(s({ a: 1, b: { c: [1, "x", undefined, true] } })).toBe(false);
    expect(s({ a: 1, b: { c: [1, "x", null, true, 5] } })).toBe(false);
    expect(s({ a: "1", b: { c: [1, "x", null, true] } })).toBe(false);
    expect(s({ a: 1, b: [] })).toBe(false);
    // Integer-like names come first in both for…in and JSON.stringify.
    expect(matches(snap({ b: 1, 2: 0, a: 1 }), { b: 1, a: 1, 2: 0 })).toBe(true);
  });

  test("a member named __proto__ (an own member once parsed) is written, before and after the tools", () => {
    const tools = JSON.stringify([{ type: "function", name: "a", description: "d".repeat(2000), parameters: { type: "object" } }]);
    for (const text of [`{"model":"m","__proto__":{"x":1},"tools":${tools}}`, `{"model":"m","tools":${tools},"__proto__":[1]}`, `{"__proto__":null,"tools":${tools},"n":1}`]) {
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(bodyJson(body)).toBe(JSON.stringify(body));
      expect(bodyJson(body)).toBe(text);
    }
  });

  test("bounded: a few large tool lists at most; small and huge ones are not kept", () => {
    const body = (description: string) => ({ model: "m", tools: [{ type: "function", name: "f", description, parameters: { type: "object", properties: {} } }] });
    const written = (b: Record<string, unknown>) => expect(bodyJson(b)).toBe(JSON.stringify(b));
    for (let i = 0; i < TOOLS_MEMO_ENTRIES * 3; i++) written(body(`${i} `.repeat(3000 + i)));
    expect(toolsMemoSize()).toBeLessThanOrEqual(TOOLS_MEMO_ENTRIES);
    const before = toolsMemoSize();
    written(body("h".repeat(TOOLS_MEMO_MAX_CHARS + 1)));
    // Long enough to be looked up in the memo (1,024 description characters), too short to be kept.
    written(body("s".repeat(1100)));
    expect(toolsMemoSize()).toBe(before);
  });
});
