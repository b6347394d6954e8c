/**
 * A Chat client that declared its functions with the legacy `functions` / `function_call` (older GUI
 * apps and SDK users), served by a provider of another format (Anthropic, Gemini, Responses) or an
 * OpenAI-compatible server (whose reply the gateway writes too), streamed
 * and not: the reply's call comes back as the Chat API answers such a request, `message.function_call`
 * / `delta.function_call` with finish_reason `function_call`, the first call only, the others named in
 * a `dropped_tool_call` warning (the X-Switchyard-Warning header of a whole reply; the call's trace of a
 * streamed one). A client that sent `tools` still gets `tool_calls`. Until 2026-12-07 the legacy client
 * got `tool_calls` too, which an app reading only `function_call` does not see.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { ssePayloads } from "../support/openai-chat-helpers.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const FUNCTIONS = [
  { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  { name: "get_time", parameters: { type: "object", properties: { tz: { type: "string" } } } },
];
const TWO_CALLS = [
  { id: "call_1", name: "get_weather", arguments: { city: "Paris" } },
  { id: "call_2", name: "get_time", arguments: { tz: "CET" } },
];
const LEFT_OUT = "The reply held 2 function calls; a request with the legacy functions parameter gets one, as function_call: the first was sent, 1 was left out. Declare the functions as tools to get every call.";

const post = (body: Record<string, unknown>) => fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** The request's warnings as the route trace keeps them. */
async function traceWarnings(res: Response): Promise<Array<{ code: string; message: string }>> {
  const trace = (await (await fetch(`${gw.url}/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`)).json()) as { warnings: Array<{ code: string; message: string }> };
  return trace.warnings;
}

describe("legacy functions served by another format: function_call, as the Chat API answers", () => {
  // chat/: an OpenAI-compatible server (the tidy lane: the body goes as the client wrote it, the reply through the hub).
  for (const model of ["anth/claude-test", "gem/gemini-test", "resp/gpt-test", "chat/gpt-test"]) {
    test(`${model}, not streamed: message.function_call of the first call, finish function_call, the second named in the warning header`, async () => {
      gw.fake.reset();
      gw.fake.handle((r) => simpleReply(r.format!, { toolCalls: TWO_CALLS }, r.stream));
      const res = await post({ model, messages: [{ role: "user", content: "weather and time?" }], functions: FUNCTIONS, function_call: "auto" });
      gw.fake.handle(undefined);
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.choices[0].message.function_call).toEqual({ name: "get_weather", arguments: '{"city":"Paris"}' });
      expect(body.choices[0].message.tool_calls).toBeUndefined();
      expect(body.choices[0].finish_reason).toBe("function_call");
      expect(JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]")).toContainEqual({ code: "dropped_tool_call", message: LEFT_OUT });
    });

    test(`${model}, streamed (openai SDK): delta.function_call, the accumulated message's function_call, finish function_call; the warning in the call's trace`, async () => {
      gw.fake.reset();
      gw.fake.handle((r) => simpleReply(r.format!, { toolCalls: TWO_CALLS }, r.stream));
      const res = await post({ model, stream: true, messages: [{ role: "user", content: "weather and time?" }], functions: FUNCTIONS });
      const text = await res.text();
      gw.fake.handle(undefined);
      const chunks = ssePayloads(text).slice(0, -1);
      expect(text).not.toContain("tool_calls");
      expect(chunks.flatMap((c) => (c.choices[0]?.delta?.function_call ? [c.choices[0].delta.function_call] : [])).map((f: any) => f.name ?? f.arguments).join("")).toBe('get_weather{"city":"Paris"}');
      expect(chunks.at(-1).choices[0].finish_reason).toBe("function_call");
      expect(await traceWarnings(res)).toContainEqual({ code: "dropped_tool_call", message: LEFT_OUT });
      // The same bytes through the openai SDK's stream helper.
      const sdk = new OpenAI({ apiKey: "x", baseURL: "http://127.0.0.1:1/v1", maxRetries: 0, fetch: (async () => new Response(text, { headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch });
      const done = await sdk.chat.completions.stream({ model, messages: [{ role: "user", content: "x" }], functions: FUNCTIONS }).finalChatCompletion();
      expect(done.choices[0]!.message.function_call).toEqual({ name: "get_weather", arguments: '{"city":"Paris"}' });
    });
  }

  test("a client that sent tools (not functions) gets tool_calls, both calls, finish tool_calls", async () => {
    gw.fake.reset();
    gw.fake.handle((r) => simpleReply(r.format!, { toolCalls: TWO_CALLS }, r.stream));
    const res = await post({ model: "anth/claude-test", messages: [{ role: "user", content: "weather and time?" }], tools: FUNCTIONS.map((f) => ({ type: "function", function: f })) });
    gw.fake.handle(undefined);
    const body = (await res.json()) as any;
    expect(body.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(["get_weather", "get_time"]);
    expect(body.choices[0].message.function_call).toBeUndefined();
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(res.headers.get("x-switchyard-warning") ?? "").not.toContain("dropped_tool_call");
  });
});
