/**
 * SPEC S-4 through the real gateway: the savers never break a provider's prefix cache. Turn 1 and turn 2
 * of a conversation are sent through the gateway and the bodies the fake upstream RECEIVED are compared
 * as bytes: turn 2 starts with every message of turn 1, byte for byte (longest common prefix), while
 * the tool results were shortened; the same tool output later in the conversation becomes the same
 * bytes. A client's moving `cache_control` marker never undoes a shortening: providers that never see
 * the markers (openai-compatible) get every result shortened the same way every turn, and one that
 * receives them (anthropic-compatible) gets a marked conversation's results as written every turn; a
 * later `is_error` result with the same text leaves an earlier result as it was sent.
 * `X-Switchyard-Token-Saver: off` leaves them whole, anthropic and claude-code providers are skipped (S-2).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { compressToolResult } from "../../pipeline/savers/index.ts";
import { clientRequest } from "../support/fixtures.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { sample, serverLog } from "../pipeline/save-tokens-fixtures/samples.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["chat", "openai-compatible"], ["resp", "openai-responses"], ["anth", "anthropic"], ["cc", "claude-code"], ["ac", "anthropic-compatible"])}
accounts:
  - id: chat-1
    provider: chat
    api_key: env:FAKE_KEY
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: cc-1
    provider: cc
    access_token: env:CC_TOKEN
  - id: ac-1
    provider: ac
    api_key: env:FAKE_KEY
`;

const DIFF = sample("git-diff.txt");
const LOG = serverLog(400);
const RG = sample("rg.txt");

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { CC_TOKEN: "cc-oauth-access-token" } });
});
afterAll(async () => {
  await gw?.stop();
});

/** Sends `body` and returns the raw body and parsed body the upstream received, and the route trace. */
async function send(path: string, body: unknown, headers: Record<string, string> = {}) {
  const before = gw.fake.requests.length;
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  await res.text();
  expect(res.status).toBe(200);
  const got = gw.fake.requests.slice(before).find((r) => r.method === "POST")!; // model discovery may GET first
  const trace: any = await (await fetch(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`)).json();
  return { raw: got.raw, body: got.body, trace };
}

/** Length of the longest common prefix of two strings (what a provider's prefix cache can reuse). */
function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Turn 2's upstream bytes start with every conversation item of turn 1's, byte for byte: the common
 * prefix of the two raw bodies reaches past the last item of turn 1 (`key`: the conversation array).
 */
function expectTurnOneKept(t1: { raw: string; body: any }, t2: { raw: string; body: any }, key: string) {
  const items = JSON.stringify(t1.body[key]);
  const start = t1.raw.indexOf(items);
  expect(start).toBeGreaterThan(0); // the items appear as compact JSON in turn 1's bytes
  const end = start + items.length - 1; // up to, not including, the closing bracket
  expect(commonPrefix(t1.raw, t2.raw)).toBeGreaterThanOrEqual(end);
  for (let i = 0; i < t1.body[key].length; i++) expect(JSON.stringify(t2.body[key][i])).toBe(JSON.stringify(t1.body[key][i]));
}

describe("turn 1 → turn 2: the upstream prefix is byte-identical while results are shortened", () => {
  test("Chat client → openai-compatible", async () => {
    const turn1 = {
      model: "chat/glm-5",
      messages: [
        { role: "system", content: "You are a coding agent." },
        { role: "user", content: "What changed, and why does the server not start?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "sh", arguments: '{"cmd":"git show"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: DIFF },
      ],
    };
    const turn2 = structuredClone(turn1);
    turn2.messages.push(
      { role: "assistant", content: "The diff touches formats/. Now the log.", tool_calls: [{ id: "call_2", type: "function", function: { name: "sh", arguments: '{"cmd":"cat server.log"}' } }] } as any,
      { role: "tool", tool_call_id: "call_2", content: LOG },
      { role: "assistant", content: null, tool_calls: [{ id: "call_3", type: "function", function: { name: "sh", arguments: '{"cmd":"git show"}' } }] },
      { role: "tool", tool_call_id: "call_3", content: DIFF },
    );
    const t1 = await send("/v1/chat/completions", turn1);
    const t2 = await send("/v1/chat/completions", turn2);
    const diffOut = compressToolResult(DIFF)!.text;
    expect(t1.body.messages[3].content).toBe(diffOut);
    expect(t1.trace.tokenSaver).toMatchObject({ results: 1, rules: { diff: 1 } });
    expectTurnOneKept(t1, t2, "messages");
    // The same output later in the conversation: the same bytes.
    expect(t2.body.messages[7].content).toBe(diffOut);
    expect(t2.body.messages[5].content).toBe(compressToolResult(LOG)!.text);
    expect(t2.trace.tokenSaver).toMatchObject({ results: 3, rules: { diff: 2, log: 1 } });
  });

  test("Codex (Responses) → openai-responses, native passthrough re-serialised", async () => {
    const turn1 = await clientRequest("codex-tool-use-2.json");
    turn1.model = "resp/gpt-5-codex";
    turn1.input.at(-1).output = RG;
    const turn2 = structuredClone(turn1);
    turn2.input.push(
      { type: "function_call", name: "shell", arguments: '{"command":["cat","server.log"]}', call_id: "call_turn2" },
      { type: "function_call_output", call_id: "call_turn2", output: LOG },
    );
    const t1 = await send("/v1/responses", turn1);
    const t2 = await send("/v1/responses", turn2);
    expect(t1.body.input.at(-1).output).toBe(compressToolResult(RG)!.text);
    expectTurnOneKept(t1, t2, "input");
    expect(t2.body.input.at(-1).output).toBe(compressToolResult(LOG)!.text);
  });

  test("Anthropic client without markers → openai-compatible (through the hub)", async () => {
    const turn1 = await clientRequest("claude-code-tool-use-2.json");
    turn1.model = "chat/glm-5";
    delete turn1.messages.at(-1).content[0].cache_control;
    turn1.messages.at(-1).content[0].content = DIFF;
    const turn2 = structuredClone(turn1);
    turn2.messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_turn2", name: "Bash", input: { command: "cat server.log" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_turn2", content: LOG }] },
    );
    const t1 = await send("/v1/messages", turn1);
    const t2 = await send("/v1/messages", turn2);
    expect(t1.body.messages.find((m: any) => m.role === "tool").content).toBe(compressToolResult(DIFF)!.text);
    expectTurnOneKept(t1, t2, "messages");
    expect(t2.body.messages.at(-1).content).toBe(compressToolResult(LOG)!.text);
  });

  /** Claude Code's turn 1 (its marker on the newest result, a diff) and turn 2 (the marker moved to the log after it). */
  async function claudeCodeTurns(model: string) {
    const turn1 = await clientRequest("claude-code-tool-use-2.json");
    turn1.model = model;
    turn1.messages.at(-1).content[0].content = DIFF; // Claude Code marks this result
    const turn2 = structuredClone(turn1);
    delete turn2.messages.at(-1).content[0].cache_control; // the marker moves to the newest result
    turn2.messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_turn2", name: "Bash", input: { command: "cat server.log" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_turn2", content: LOG, cache_control: { type: "ephemeral" } }] },
    );
    return [turn1, turn2];
  }

  test("Claude Code's moving marker → openai-compatible (the markers never reach it): every result shortened, the same bytes every turn", async () => {
    const [turn1, turn2] = await claudeCodeTurns("chat/glm-5");
    const t1 = await send("/v1/messages", turn1);
    const t2 = await send("/v1/messages", turn2);
    expect(t1.raw).not.toContain("cache_control");
    expect(t1.body.messages.find((m: any) => m.role === "tool").content).toBe(compressToolResult(DIFF)!.text);
    expect(t2.body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content)).toEqual([compressToolResult(DIFF)!.text, compressToolResult(LOG)!.text]);
    expectTurnOneKept(t1, t2, "messages");
  });

  test("Claude Code's moving marker → anthropic-compatible (it receives the markers): every result as written, turn after turn", async () => {
    const [turn1, turn2] = await claudeCodeTurns("ac/glm-5");
    const t1 = await send("/v1/messages", turn1);
    const t2 = await send("/v1/messages", turn2);
    expect(t1.body.messages.at(-1).content[0].content).toBe(DIFF);
    expect(t1.trace.tokenSaver).toEqual({ skipped: "cache_marker" });
    expect(t2.body.messages.at(-3).content[0].content).toBe(DIFF);
    expect(t2.body.messages.at(-1).content[0].content).toBe(LOG);
    expect(t2.trace.tokenSaver).toEqual({ skipped: "cache_marker" });
  });

  test("an Anthropic client marking the previous turn's last message → openai-compatible: the result shortened in turn 1 is the same bytes in turn 2, after the marker passed it (tryout7)", async () => {
    const turn1 = {
      model: "chat/glm-5",
      max_tokens: 1000,
      messages: [
        { role: "user", content: [{ type: "text", text: "investigate the slow requests", cache_control: { type: "ephemeral" } }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "cat server.log" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: LOG }] },
      ] as any[],
    };
    const turn2 = structuredClone(turn1);
    delete turn2.messages[0].content[0].cache_control;
    turn2.messages[2].content[0].cache_control = { type: "ephemeral" }; // the marker moves past the log
    turn2.messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "rg -n session" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: RG }] },
    );
    const t1 = await send("/v1/messages", turn1);
    const t2 = await send("/v1/messages", turn2);
    expect(t1.body.messages.at(-1).content).toBe(compressToolResult(LOG)!.text);
    expectTurnOneKept(t1, t2, "messages");
    // What turn 2 records as saved is what it sent shorter: the log again and the search results.
    expect(t2.trace.tokenSaver).toMatchObject({ results: 2, rules: { log: 1, search: 1 } });
  });

  test("a later is_error result with the same text as an earlier one → openai-compatible: the earlier result stays as turn 1 sent it (tryout7)", async () => {
    const turn1 = {
      model: "chat/glm-5",
      max_tokens: 100,
      messages: [
        { role: "user", content: "run the tests" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "bun test" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: LOG }] },
      ] as any[],
    };
    const turn2 = structuredClone(turn1);
    turn2.messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: "t2", name: "Bash", input: { command: "bun test --bail" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", is_error: true, content: LOG }] },
    );
    const t1 = await send("/v1/messages", turn1);
    const t2 = await send("/v1/messages", turn2);
    expect(t1.body.messages.at(-1).content).toBe(compressToolResult(LOG)!.text);
    expectTurnOneKept(t1, t2, "messages");
    expect(t2.body.messages.at(-1).content).toBe(`Error: ${LOG}`);
  });
});

describe("left whole", () => {
  const chatTurn = () => ({
    model: "chat/glm-5",
    messages: [
      { role: "user", content: "what changed?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "sh", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: DIFF },
    ],
  });

  test("X-Switchyard-Token-Saver: off → the upstream body is what the gateway sends without savers", async () => {
    const off = await send("/v1/chat/completions", chatTurn(), { "x-switchyard-token-saver": "off" });
    expect(off.body.messages[2].content).toBe(DIFF);
    expect(off.trace.tokenSaver).toEqual({ skipped: "header" });
    const on = await send("/v1/chat/completions", chatTurn());
    expect(on.body.messages[2].content).not.toBe(DIFF);
    // Apart from the tool result the two bodies are the same bytes.
    expect(off.raw.replace(JSON.stringify(DIFF), "X")).toBe(on.raw.replace(JSON.stringify(on.body.messages[2].content), "X"));
  });

  for (const model of ["anth/claude-sonnet-4-5", "cc/claude-sonnet-4-5"]) {
    test(`${model.split("/")[0]} provider: the tool result reaches it whole (S-2)`, async () => {
      const body = await clientRequest("claude-code-tool-use-2.json");
      body.model = model;
      delete body.messages.at(-1).content[0].cache_control;
      body.messages.at(-1).content[0].content = LOG;
      const t = await send("/v1/messages", body);
      expect(t.body.messages.at(-1).content[0].content).toBe(LOG);
      expect(t.trace.tokenSaver).toEqual({ skipped: "prompt_cache" });
    });
  }
});
