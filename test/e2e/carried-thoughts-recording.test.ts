/**
 * A credential in reasoning a Gemini client's call carries (SPEC O-6: a recording never carries one).
 * A Gemini client gets an Anthropic provider's thinking as thought parts, and the call after it carries
 * the same thinking as its `thoughtSignature`, `sy|thoughts|<base64url JSON>` (formats/gemini/
 * thought-carry.ts), which the client sends back on its next turn. The flight recorder scrubs every
 * body it keeps; until 2026-12-07 the base64url copy went through unscrubbed and decoded back to the
 * credential, in the client's reply and in its next request. The client itself still gets its
 * reasoning whole (it is its own conversation); only what the gateway keeps is scrubbed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const KEY = "sk-ant-api03-" + "Q7w8E9r0T1y2U3i4".repeat(5);
const THOUGHT = `The .env holds ANTHROPIC_API_KEY=${KEY}; I must not print it.`;
const TAG = "sy|thoughts|";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${providersAtFake(["anth", "anthropic"])}
accounts:
  - id: anth-1
    provider: anth
    api_key: env:ANTH_KEY
settings:
  flight_recorder: { enabled: true }
`, { env: { ANTH_KEY: "fake-account-key-0123456789" } });
});
afterAll(async () => {
  await gw?.stop();
});

const TOOLS = [{ functionDeclarations: [{ name: "run_shell_command", description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "string" } } } }] }];
const GEN = { thinkingConfig: { includeThoughts: true, thinkingBudget: 4096 } };
const generate = (contents: unknown[]) =>
  fetch(`${gw.url}/v1beta/models/anth/claude-test:generateContent`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contents, tools: TOOLS, generationConfig: GEN }) });
const recording = async (res: Response) => await (await fetch(`${gw.url}/admin/api/calls/${res.headers.get("x-switchyard-route-id")}/recording`)).text();

/** Every carried value in `text`, decoded. */
const carried = (text: string) => [...text.matchAll(/sy\|thoughts\|([A-Za-z0-9_-]+)/g)].map((m) => Buffer.from(m[1]!, "base64url").toString("utf8"));

test("the recording of the reply and of the next turn that sends the call back hold no copy of the credential", async () => {
  gw.fake.enqueue({
    json: {
      id: "msg_1", type: "message", role: "assistant", model: "claude-test", stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 9 },
      content: [
        { type: "thinking", thinking: THOUGHT, signature: "QW50aHJvcGljU2ln" },
        { type: "tool_use", id: "toolu_1", name: "run_shell_command", input: { command: "ls" } },
      ],
    },
  });
  const user = { role: "user", parts: [{ text: "List the files" }] };
  const res = await generate([user]);
  expect(res.status).toBe(200);
  const parts = ((await res.json()) as any).candidates[0].content.parts as any[];
  const call = parts.find((p) => p.functionCall);
  // The client gets its reasoning whole, on the call too.
  expect(call.thoughtSignature.startsWith(TAG)).toBe(true);
  expect(carried(call.thoughtSignature)[0]).toContain(KEY);

  const first = await recording(res);
  expect(first).toContain(TAG);
  expect(first).not.toContain(KEY);
  expect(carried(first).length).toBeGreaterThan(0);
  for (const d of carried(first)) {
    expect(d).not.toContain(KEY);
    expect(d).toContain("ANTHROPIC_API_KEY=[redacted]");
  }

  // Gemini CLI's next turn: no thought parts, the call with its signature, the result.
  gw.fake.enqueue({ json: { id: "msg_2", type: "message", role: "assistant", model: "claude-test", stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 }, content: [{ type: "text", text: "done" }] } });
  const res2 = await generate([user, { role: "model", parts: [{ functionCall: call.functionCall, thoughtSignature: call.thoughtSignature }] }, { role: "user", parts: [{ functionResponse: { id: call.functionCall.id, name: "run_shell_command", response: { output: "a.ts" } } }] }]);
  expect(res2.status).toBe(200);
  await res2.text();
  // The provider got the thinking back, in clear, signed.
  expect(gw.fake.requests.at(-1)!.body.messages[1].content[0]).toEqual({ type: "thinking", thinking: THOUGHT, signature: "QW50aHJvcGljU2ln" });
  const second = await recording(res2);
  expect(second).toContain(TAG); // the client's body, the call sent back
  expect(second).not.toContain(KEY); // nor the upstream request's clear thinking
  for (const d of carried(second)) expect(d).not.toContain(KEY);
});
