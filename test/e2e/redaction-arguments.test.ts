/**
 * SPEC S-3 through the real gateway, for tool-call arguments (pipeline/redact-json.ts): a Chat client's
 * earlier call whose JSON arguments hold values right after `\n` escapes reaches a native Chat provider
 * and a translated Anthropic one as valid JSON (the call's input intact, not `{}`) without any of the
 * values, and the model's new call that names their placeholders reaches the client with the values,
 * newlines and all. A Gemini client's earlier `functionCall.args` and nested `functionResponse` members
 * are redacted too, and so is a card number written as a JSON number in an Anthropic client's
 * `tool_use.input` or a Gemini client's `functionCall.args` / `functionResponse.response` (the model's
 * call naming its placeholder gets the number back). A secret restored into a reply and sent back on
 * the next turn goes upstream as its placeholder again. The fake upstream records the exact bytes it received.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleReply } from "../support/fake-upstream.ts";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";

const EMAIL = "bob@example.com";
const IP = "10.20.30.40";
const KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234";
const GHP = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const VALUES = [EMAIL, IP, KEY, GHP];
const COMMAND = `printf 'owner:\n${EMAIL}\nhost:\n${IP}\nkey:\n${KEY}\ntoken:\n${GHP}'`;
const REDACTED = "printf 'owner:\n[EMAIL_1]\nhost:\n[IPV4_1]\nkey:\n[SECRET_1]\ntoken:\n[SECRET_2]'";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(DEFAULT_YAML + "settings:\n  redaction: { enabled: true }\n");
});
afterAll(async () => {
  await gw?.stop();
});

/** The model calls the tool again with the placeholders, each after a newline. */
function script() {
  gw.fake.reset();
  gw.fake.handle((req) => simpleReply(req.format!, { toolCalls: [{ id: "call_2", name: "shell", arguments: { command: "echo '\n[EMAIL_1]\n[SECRET_1]'" } }] }, req.stream));
}

/** The bytes the upstream received: valid JSON, none of the values. */
function upstreamBody(): any {
  const raw = gw.fake.requests.at(-1)!.raw;
  for (const v of VALUES) expect(raw).not.toContain(v);
  return JSON.parse(raw);
}

const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("Chat client: earlier tool-call arguments with values after \\n", () => {
  const messages = [
    { role: "user", content: "write the file" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "shell", arguments: JSON.stringify({ command: COMMAND }) } }] },
    { role: "tool", tool_call_id: "call_1", content: "done" },
  ];
  const tools = [{ type: "function", function: { name: "shell", parameters: { type: "object", properties: { command: { type: "string" } } } } }];

  test("to a Chat provider: the arguments go as valid JSON with placeholders; the reply's call carries the values", async () => {
    script();
    const res = await post("/v1/chat/completions", { model: "chat/glm-test", messages, tools });
    expect(res.status).toBe(200);
    const up = upstreamBody();
    expect(JSON.parse(up.messages[1].tool_calls[0].function.arguments)).toEqual({ command: REDACTED });
    const reply: any = await res.json();
    expect(JSON.parse(reply.choices[0].message.tool_calls[0].function.arguments)).toEqual({ command: `echo '\n${EMAIL}\n${KEY}'` });
  });

  test("to an Anthropic provider: the call's input is the redacted command, not {}", async () => {
    script();
    const res = await post("/v1/chat/completions", { model: "anth/claude-test", messages, tools });
    expect(res.status).toBe(200);
    const up = upstreamBody();
    const use = up.messages[1].content.find((b: { type: string }) => b.type === "tool_use");
    expect(use.input).toEqual({ command: REDACTED });
    const reply: any = await res.json();
    expect(JSON.parse(reply.choices[0].message.tool_calls[0].function.arguments)).toEqual({ command: `echo '\n${EMAIL}\n${KEY}'` });
  });
});

describe("Gemini client: the model's earlier functionCall and a structured functionResponse", () => {
  test("args and nested response members reach the Gemini provider redacted", async () => {
    script();
    const body = {
      contents: [
        { role: "user", parts: [{ text: "deploy with my key" }] },
        { role: "model", parts: [{ functionCall: { name: "shell", args: { command: COMMAND } } }] },
        { role: "user", parts: [{ functionResponse: { name: "shell", response: { output: `deployed; notified ${EMAIL}`, details: { token: GHP, host: IP } } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: "shell", parameters: { type: "object", properties: { command: { type: "string" } } } }] }],
    };
    const res = await post("/v1beta/models/gem/gemini-test:generateContent", body);
    expect(res.status).toBe(200);
    const up = upstreamBody();
    expect(up.contents[1].parts[0].functionCall.args).toEqual({ command: REDACTED });
    expect(up.contents[2].parts[0].functionResponse.response).toEqual({ output: "deployed; notified [EMAIL_1]", details: { token: "[SECRET_2]", host: "[IPV4_1]" } });
    const reply: any = await res.json();
    expect(reply.candidates[0].content.parts.find((p: any) => p.functionCall).functionCall.args).toEqual({ command: `echo '\n${EMAIL}\n${KEY}'` });
  });
});

describe("a card number written as a JSON number in a structured tool payload", () => {
  // The model's earlier call and the tool's answer hold the card as a number and as text; the model calls
  // the tool again naming both placeholders. Anthropic and Gemini clients sent the number in clear.
  const ARGS = { card: 4111111111111111, note: "card 4111 1111 1111 1111" };
  const REDACTED_ARGS = { card: "[CARD_1]", note: "card [CARD_2]" };
  function cardScript() {
    gw.fake.reset();
    gw.fake.handle((req) => simpleReply(req.format!, { toolCalls: [{ id: "call_2", name: "pay", arguments: REDACTED_ARGS }] }, req.stream));
  }
  function upstreamRaw(): any {
    const raw = gw.fake.requests.at(-1)!.raw;
    expect(raw).not.toContain("4111111111111111");
    expect(raw).not.toContain("4111 1111");
    return JSON.parse(raw);
  }

  test("Anthropic client: tool_use.input reaches the provider as the placeholder; the reply's call carries the number", async () => {
    cardScript();
    const res = await post("/v1/messages", {
      model: "anth/claude-test",
      max_tokens: 100,
      messages: [
        { role: "user", content: "pay" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "pay", input: ARGS }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "declined" }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(upstreamRaw().messages[1].content[0].input).toEqual(REDACTED_ARGS);
    const reply: any = await res.json();
    expect(reply.content.find((b: any) => b.type === "tool_use").input).toEqual(ARGS);
  });

  test("Gemini client: functionCall.args and functionResponse.response reach the provider as the placeholder; the reply's call carries the number", async () => {
    cardScript();
    const res = await post("/v1beta/models/gem/gemini-test:generateContent", {
      contents: [
        { role: "user", parts: [{ text: "pay" }] },
        { role: "model", parts: [{ functionCall: { name: "pay", args: ARGS } }] },
        { role: "user", parts: [{ functionResponse: { name: "pay", response: { declined: ARGS } } }] },
      ],
    });
    expect(res.status).toBe(200);
    const up = upstreamRaw();
    expect(up.contents[1].parts[0].functionCall.args).toEqual(REDACTED_ARGS);
    expect(up.contents[2].parts[0].functionResponse.response).toEqual({ declined: REDACTED_ARGS });
    const reply: any = await res.json();
    expect(reply.candidates[0].content.parts.find((p: any) => p.functionCall).functionCall.args).toEqual(ARGS);
  });
});

describe("a secret restored into a reply, sent back on the next turn", () => {
  test("goes upstream as its placeholder again, though the text around it no longer says it is a secret", async () => {
    const env = "DATABASE_PASSWORD=Tr0ub4dor3xyz\nAUTH=Bearer abcdef0123456789abcdef\n";
    const messages: unknown[] = [
      { role: "user", content: "what is in .env?" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "shell", arguments: '{"command":"cat .env"}' } }] },
      { role: "tool", tool_call_id: "c1", content: env },
    ];
    gw.fake.reset();
    gw.fake.handle((req) => simpleReply(req.format!, { text: "The password is [SECRET_1] and the token [SECRET_2]." }, req.stream));
    const r1: any = await (await post("/v1/chat/completions", { model: "chat/glm-test", messages })).json();
    const reply = r1.choices[0].message.content;
    expect(reply).toBe("The password is Tr0ub4dor3xyz and the token abcdef0123456789abcdef.");
    messages.push({ role: "assistant", content: reply }, { role: "user", content: "thanks, rotate it" });
    const res = await post("/v1/chat/completions", { model: "chat/glm-test", messages });
    expect(res.status).toBe(200);
    const raw = gw.fake.requests.at(-1)!.raw;
    for (const v of ["Tr0ub4dor3xyz", "abcdef0123456789abcdef"]) expect(raw).not.toContain(v);
    expect(JSON.parse(raw).messages[3].content).toBe("The password is [SECRET_1] and the token [SECRET_2].");
  });
});
