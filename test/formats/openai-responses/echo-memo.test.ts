/**
 * The request echo's tools remembered across requests (formats/openai-responses/echo-memo.ts, with the
 * memo of formats/write-body-json.ts; docs/performance.md item 103): a Codex turn after another gets
 * the same response objects, a turn whose settings change (`previous_response_id`, as on a WebSocket)
 * reuses the remembered tools, and a request whose echo differs anywhere (a nested schema value, a
 * member's order, a member JSON leaves out) gets its own echo, never the remembered one. The memo
 * stays within its bounds. (The memo's compare on its own: test/formats/write-body-json.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import { clientRequest } from "../../support/fixtures.ts";
import type { HubRequest } from "../../../formats/hub.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { responseEcho } from "../../../formats/openai-responses/response.ts";
import { ECHO_MEMO_ENTRIES, echoMembers, echoMemoSize } from "../../../formats/openai-responses/echo-memo.ts";
import { TOOLS_MEMO_ENTRIES, TOOLS_MEMO_MAX_CHARS, toolsMemoSize } from "../../../formats/write-body-json.ts";

const parse = (body: unknown) => openaiResponses.parseRequest!(body as never);
/** What the encoder wrote before the memo: the members of `JSON.stringify(echo)` and a comma. */
const written = (echo: Record<string, unknown>) => {
  const t = JSON.stringify(echo);
  return t.length > 2 ? t.slice(1, -1) + "," : "";
};

/** A reply's SSE text with fixed ids and clock. */
function reply(request: HubRequest): string {
  let n = 0;
  let sse = "";
  const e = openaiResponses.createEncoder!({ model: "m", request, newId: (p) => `${p}${++n}`, now: () => 1_750_000_000_000 }, (t) => (sse += t));
  e.event({ type: "message_start", usage: { inputTokens: 1 } });
  e.event({ type: "block_start", index: 0, block: { type: "text" } });
  e.event({ type: "block_delta", index: 0, delta: { type: "text", text: "hi" } });
  e.event({ type: "block_stop", index: 0 });
  e.event({ type: "finish", reason: "end_turn" });
  e.end();
  return sse;
}

/** Codex's recorded turn, parsed anew each call (as each request is), with `edit` applied to its JSON body first. */
async function codexTurn(edit?: (body: any) => void): Promise<HubRequest> {
  const body = structuredClone(await clientRequest("codex-tool-use-2.json"));
  edit?.(body);
  return parse(body);
}

describe("the request echo remembered across requests", () => {
  test("a Codex turn after another: the same echo in each of the three response objects", async () => {
    const first = reply(await codexTurn());
    const second = reply(await codexTurn());
    expect(second).toBe(first);
    const tools = JSON.stringify(responseEcho(await codexTurn()).tools);
    expect(tools.length).toBeGreaterThan(15_000);
    expect(second.split(tools).length - 1).toBe(3);
  });

  test("an echo that differs anywhere gets its own text", async () => {
    const base = await codexTurn();
    echoMembers(responseEcho(base)); // remembered
    const edits: Record<string, (b: any) => void> = {
      "a nested schema value": (b) => {
        const t = b.tools.find((x: any) => x.type === "function" && x.parameters?.properties);
        const p = Object.values(t.parameters.properties)[0] as any;
        p.description = `${p.description ?? ""}!`;
      },
      "the order of a schema's members": (b) => {
        const t = b.tools.find((x: any) => x.type === "function" && Object.keys(x.parameters?.properties ?? {}).length > 1);
        const props = t.parameters.properties;
        t.parameters.properties = Object.fromEntries(Object.entries(props).reverse());
      },
      "a string where a number was": (b) => {
        b.tools.push({ type: "function", name: "n", parameters: { type: "object", properties: { a: { type: "integer", default: 1 } } } });
      },
      "the last tool removed": (b) => {
        b.tools.pop();
      },
      "a setting": (b) => {
        b.reasoning = { ...b.reasoning, effort: "high" };
      },
      "instructions added": (b) => {
        b.instructions = "Be brief.";
      },
    };
    for (const [what, edit] of Object.entries(edits)) {
      const echo = responseEcho(await codexTurn(edit));
      expect(`${what}: ${echoMembers(echo) === written(echo)}`).toBe(`${what}: true`);
      expect(`${what}: ${echoMembers(echo) === written(responseEcho(base))}`).toBe(`${what}: false`);
      // And the reply shows the edit (what the client reads).
      const r = reply(await codexTurn(edit));
      expect(r.includes(written(echo))).toBe(true);
    }
    // The number/string case on its own: 1 and "1" are different JSON.
    const one = (v: unknown) => responseEcho(parse({ model: "m", input: "x", tools: [{ type: "function", name: "f", description: "d".repeat(5000), parameters: { type: "object", properties: { v: { type: "string", default: v } } } }] }));
    expect(echoMembers(one(1))).toBe(written(one(1)));
    expect(echoMembers(one("1"))).toBe(written(one("1")));
    expect(echoMembers(one(1))).not.toBe(echoMembers(one("1")));
  });

  test("settings that change every turn: the tools stay remembered, the settings are the new ones", async () => {
    echoMembers(responseEcho(await codexTurn()));
    const size = toolsMemoSize();
    for (const id of ["resp_1", "resp_2", "resp_3"]) {
      const echo = responseEcho(await codexTurn((b) => (b.previous_response_id = id)));
      expect(echoMembers(echo)).toBe(written(echo));
      expect(echoMembers(echo)).toContain(`"previous_response_id":"${id}"`);
    }
    expect(toolsMemoSize()).toBe(size);
  });

  test("members JSON has no text for are left out, as JSON.stringify leaves them out", async () => {
    const tools = responseEcho(await codexTurn()).tools;
    const echo = { a: undefined, tools, f: () => 1, b: 1, c: null };
    expect(echoMembers(echo)).toBe(written(echo));
    expect(echoMembers({ ...echo, tools: [] })).toBe(written({ ...echo, tools: [] }));
  });

  test("bounded: a few large echoes at most; small and huge ones are not kept", () => {
    const withTool = (description: string) => parse({ model: "m", input: "x", tools: [{ type: "function", name: "f", description, parameters: { type: "object", properties: {} } }] });
    for (let i = 0; i < TOOLS_MEMO_ENTRIES * 3; i++) echoMembers(responseEcho(withTool(`${i} `.repeat(3000 + i))));
    expect(toolsMemoSize()).toBeLessThanOrEqual(TOOLS_MEMO_ENTRIES);
    const before = toolsMemoSize();
    const huge = responseEcho(withTool("h".repeat(TOOLS_MEMO_MAX_CHARS + 1)));
    expect(echoMembers(huge)).toBe(written(huge));
    const small = responseEcho(withTool("short"));
    expect(echoMembers(small)).toBe(written(small));
    expect(toolsMemoSize()).toBe(before);
  });
});

/** The bench's request (1,650 characters of instructions, no tools), parsed anew each call, with `extra` members on top. */
const SYSTEM = "You are a careful coding assistant. Answer briefly and precisely. ".repeat(25);
const benchTurn = (extra: Record<string, unknown> = {}) => parse({ model: "m", stream: true, instructions: SYSTEM, input: "Summarise the change in one sentence.", max_output_tokens: 256, ...extra });

describe("the echo's other members remembered across requests (item 151)", () => {
  test("the same instructions and settings again: the same text, one entry", () => {
    const first = echoMembers(responseEcho(benchTurn()));
    const size = echoMemoSize();
    for (let i = 0; i < 3; i++) {
      const echo = responseEcho(benchTurn());
      expect(echoMembers(echo)).toBe(written(echo));
      expect(echoMembers(echo)).toBe(first);
    }
    expect(echoMemoSize()).toBe(size);
    expect(reply(benchTurn())).toContain(first);
  });

  test("a new previous_response_id each turn: written in, the rest remembered", () => {
    echoMembers(responseEcho(benchTurn()));
    const size = echoMemoSize();
    for (const id of ["resp_a", 'resp_"quoted"', "resp_c"]) {
      const echo = responseEcho(benchTurn({ previous_response_id: id }));
      expect(echoMembers(echo)).toBe(written(echo));
      expect(echoMembers(echo)).toContain(`"previous_response_id":${JSON.stringify(id)}`);
    }
    expect(echoMemoSize()).toBe(size);
  });

  test("an echo that differs in any other member gets its own text", () => {
    const base = responseEcho(benchTurn());
    echoMembers(base);
    const edits: Record<string, Record<string, unknown>> = {
      "instructions one character longer": { instructions: SYSTEM + "!" },
      "instructions of the same length": { instructions: "X" + SYSTEM.slice(1) },
      "a number": { max_output_tokens: 257 },
      "a nested setting": { reasoning: { effort: "high" } },
      "a text format": { text: { format: { type: "json_object" } } },
      "metadata": { metadata: { a: "1" } },
      "a tool": { tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }] },
      "a tool choice": { tool_choice: "required" },
    };
    for (const [what, extra] of Object.entries(edits)) {
      const echo = responseEcho(benchTurn(extra));
      expect(`${what}: ${echoMembers(echo) === written(echo)}`).toBe(`${what}: true`);
      expect(`${what}: ${echoMembers(echo) === written(base)}`).toBe(`${what}: false`);
      // Asked again (now remembered), still its own.
      expect(`${what}: ${echoMembers(responseEcho(benchTurn(extra))) === written(echo)}`).toBe(`${what}: true`);
    }
    expect(echoMembers(responseEcho(benchTurn()))).toBe(written(base));
  });

  test("bounded: the most recently used echoes at most", () => {
    for (let i = 0; i < ECHO_MEMO_ENTRIES * 3; i++) {
      const echo = responseEcho(benchTurn({ instructions: `client ${i}` }));
      expect(echoMembers(echo)).toBe(written(echo));
    }
    expect(echoMemoSize()).toBe(ECHO_MEMO_ENTRIES);
  });
});
