/**
 * SPEC S-3 through the real gateway: with redaction on, the upstream sees placeholders and the client
 * sees its own values again, in the reply's text and tool-call arguments, streamed (the placeholder
 * split across deltas at several points) and not streamed, for Chat, Responses, Anthropic and Gemini
 * clients, each read with its official SDK, to a native provider and to a translated one. The route
 * trace counts replacements both ways and holds no value.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { simpleReply } from "../support/fake-upstream.ts";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";

const EMAIL = "dana.lee@corp.example";
const IP = "203.0.113.44";
/** A key block: its newlines must come back JSON-escaped inside tool arguments. */
const PEM = "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEAq7BFUpkGp3+XQ\n-----END PRIVATE KEY-----";
const PROMPT = `My key is ${PEM}\nMail ${EMAIL} from ${IP} please.`;

/** What the model answers, in placeholders (the numbering the redact stage gives PROMPT). */
const TEXT = "Sending to [EMAIL_1] from [IPV4_1] now.";
const ARGS = { to: "[EMAIL_1]", key: "[SECRET_1]" };
const ARGS_JSON = JSON.stringify(ARGS);
const WANT_TEXT = `Sending to ${EMAIL} from ${IP} now.`;
const WANT_ARGS = { to: EMAIL, key: PEM };

/** Splits of `s` at the given offsets. */
const splitAt = (s: string, cuts: number[]) => [0, ...cuts].map((c, i, a) => s.slice(c, a[i + 1] ?? s.length));
const E = TEXT.indexOf("[EMAIL_1]");
const A = ARGS_JSON.indexOf("[EMAIL_1]");
const S = ARGS_JSON.indexOf("[SECRET_1]");
/** Split points: before the placeholder, after `[`, in the label, before the digit, before `]`, after it; and a three-way split. */
const SPLITS: Array<{ name: string; text: number[]; args: number[] }> = [
  { name: "before [", text: [E], args: [A] },
  { name: "after [", text: [E + 1], args: [A + 1] },
  { name: "inside the label", text: [E + 3], args: [S + 4] },
  { name: "before the digit", text: [E + 7], args: [S + 8] },
  { name: "before ]", text: [E + 8], args: [S + 9] },
  { name: "after ]", text: [E + 9], args: [A + 9] },
  { name: "three pieces", text: [E + 1, E + 7], args: [A + 2, A + 8, S + 1] },
];

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(DEFAULT_YAML + "settings:\n  redaction: { enabled: true }\n");
});
afterAll(async () => {
  await gw?.stop();
});

/** The fake answers every request with TEXT and one tool call, split as `split` says. */
function script(split: { text: number[]; args: number[] }) {
  gw.fake.reset();
  gw.fake.handle((req) =>
    simpleReply(
      req.format!,
      {
        text: TEXT,
        textPieces: splitAt(TEXT, split.text),
        toolCalls: [{ id: "call_1", name: "send_mail", arguments: ARGS, argumentPieces: splitAt(ARGS_JSON, split.args) }],
      },
      req.stream,
    ),
  );
}

/** The upstream saw placeholders only, and the trace counts both ways without values. */
async function checkUpstreamAndTrace(routeId: string | null) {
  const sent = JSON.stringify(gw.fake.requests.at(-1)!.body);
  expect(sent).toContain("[EMAIL_1]");
  expect(sent).toContain("[SECRET_1]");
  expect(sent).toContain("[IPV4_1]");
  for (const v of [EMAIL, IP, "MIIBVQIB"]) expect(sent).not.toContain(v);
  const trace: any = await (await fetch(`${gw.url}/admin/api/route-traces/${routeId}`)).json();
  expect(trace.redactions).toEqual({ secret: 1, email: 1, ipv4: 1 });
  expect(trace.restored).toEqual({ email: 2, ipv4: 1, secret: 1 });
  for (const v of [EMAIL, IP, "MIIBVQIB"]) expect(JSON.stringify(trace)).not.toContain(v);
}

const TOOL_OPENAI = { type: "function" as const, function: { name: "send_mail", parameters: { type: "object", properties: { to: { type: "string" }, key: { type: "string" } } } } };
const TOOL_ANTHROPIC = { name: "send_mail", input_schema: { type: "object" as const, properties: { to: { type: "string" }, key: { type: "string" } } } };
const TOOL_RESPONSES = { type: "function" as const, name: "send_mail", strict: false, parameters: { type: "object", properties: { to: { type: "string" }, key: { type: "string" } } } };

/** Captures the route id of the last gateway reply an SDK read. */
function capturingFetch(): { fetch: typeof fetch; routeId: () => string | null } {
  let id: string | null = null;
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    id = res.headers.get("x-switchyard-route-id");
    return res;
  }) as typeof fetch;
  return { fetch: f, routeId: () => id };
}

// Each client format to its native provider and to a translated one.
const CHAT_MODELS = ["chat/glm-test", "anth/claude-test"];
const RESPONSES_MODELS = ["resp/gpt-test", "gem/gemini-test"];
const ANTHROPIC_MODELS = ["anth/claude-test", "oai/gpt-test"];
const GEMINI_MODELS = ["gem/gemini-test", "resp/gpt-test"];

describe("Chat client (openai SDK)", () => {
  for (const model of CHAT_MODELS) {
    for (const split of SPLITS) {
      test(`${model}, streamed, split ${split.name}: text and tool arguments carry the values`, async () => {
        script(split);
        const cap = capturingFetch();
        const client = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: cap.fetch });
        const stream = await client.chat.completions.create({ model, messages: [{ role: "user", content: PROMPT }], tools: [TOOL_OPENAI], stream: true });
        let text = "";
        let args = "";
        for await (const c of stream) {
          text += c.choices[0]?.delta?.content ?? "";
          args += c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "";
        }
        expect(text).toBe(WANT_TEXT);
        expect(JSON.parse(args)).toEqual(WANT_ARGS);
        await checkUpstreamAndTrace(cap.routeId());
      });
    }
    test(`${model}, not streamed`, async () => {
      script({ text: [], args: [] });
      const cap = capturingFetch();
      const client = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: cap.fetch });
      const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: PROMPT }], tools: [TOOL_OPENAI] });
      expect(r.choices[0].message.content).toBe(WANT_TEXT);
      const call = r.choices[0].message.tool_calls![0] as { function: { arguments: string } };
      expect(JSON.parse(call.function.arguments)).toEqual(WANT_ARGS);
      await checkUpstreamAndTrace(cap.routeId());
    });
  }
});

describe("Responses client (openai SDK)", () => {
  for (const model of RESPONSES_MODELS) {
    for (const split of SPLITS) {
      test(`${model}, streamed, split ${split.name}: deltas and the final response carry the values`, async () => {
        script(split);
        const cap = capturingFetch();
        const client = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: cap.fetch });
        const stream = client.responses.stream({ model, input: PROMPT, tools: [TOOL_RESPONSES] });
        let text = "";
        let args = "";
        for await (const ev of stream) {
          if (ev.type === "response.output_text.delta") text += ev.delta;
          if (ev.type === "response.function_call_arguments.delta") args += ev.delta;
        }
        const final = await stream.finalResponse();
        expect(text).toBe(WANT_TEXT);
        expect(JSON.parse(args)).toEqual(WANT_ARGS);
        expect(final.output_text).toBe(WANT_TEXT);
        const call = final.output.find((o) => o.type === "function_call") as { arguments: string };
        expect(JSON.parse(call.arguments)).toEqual(WANT_ARGS);
        await checkUpstreamAndTrace(cap.routeId());
      });
    }
    test(`${model}, not streamed`, async () => {
      script({ text: [], args: [] });
      const cap = capturingFetch();
      const client = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0, fetch: cap.fetch });
      const r = await client.responses.create({ model, input: PROMPT, tools: [TOOL_RESPONSES] });
      expect(r.output_text).toBe(WANT_TEXT);
      const call = r.output.find((o) => o.type === "function_call") as { arguments: string };
      expect(JSON.parse(call.arguments)).toEqual(WANT_ARGS);
      await checkUpstreamAndTrace(cap.routeId());
    });
  }
});

describe("Anthropic client (@anthropic-ai/sdk)", () => {
  for (const model of ANTHROPIC_MODELS) {
    for (const split of SPLITS) {
      test(`${model}, streamed, split ${split.name}: the SDK's final message carries the values`, async () => {
        script(split);
        const cap = capturingFetch();
        const client = new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0, fetch: cap.fetch });
        const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: PROMPT }], tools: [TOOL_ANTHROPIC] });
        let text = "";
        stream.on("text", (t) => (text += t));
        const msg = await stream.finalMessage();
        expect(text).toBe(WANT_TEXT);
        expect(msg.content.find((b) => b.type === "text")).toMatchObject({ text: WANT_TEXT });
        expect(msg.content.find((b) => b.type === "tool_use")).toMatchObject({ name: "send_mail", input: WANT_ARGS });
        await checkUpstreamAndTrace(cap.routeId());
      });
    }
    test(`${model}, not streamed`, async () => {
      script({ text: [], args: [] });
      const cap = capturingFetch();
      const client = new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0, fetch: cap.fetch });
      const msg = await client.messages.create({ model, max_tokens: 100, messages: [{ role: "user", content: PROMPT }], tools: [TOOL_ANTHROPIC] });
      expect(msg.content.find((b) => b.type === "text")).toMatchObject({ text: WANT_TEXT });
      expect(msg.content.find((b) => b.type === "tool_use")).toMatchObject({ input: WANT_ARGS });
      await checkUpstreamAndTrace(cap.routeId());
    });
  }
});

describe("Gemini client (@google/genai)", () => {
  const tools = [{ functionDeclarations: [{ name: "send_mail", parametersJsonSchema: { type: "object", properties: { to: { type: "string" }, key: { type: "string" } } } }] }];
  /** @google/genai takes no fetch: the route id comes from the gateway's last request log line. */
  const lastRouteId = () => gw.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === "request")?.routeId ?? null;
  for (const model of GEMINI_MODELS) {
    for (const split of SPLITS) {
      test(`${model}, streamed, split ${split.name}: text and function call args carry the values`, async () => {
        script(split);
        const client = new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: gw.url } });
        let text = "";
        let args: unknown;
        for await (const c of await client.models.generateContentStream({ model, contents: PROMPT, config: { tools } })) {
          for (const p of c.candidates?.[0]?.content?.parts ?? []) {
            if (p.text) text += p.text;
            if (p.functionCall) args = p.functionCall.args;
          }
        }
        expect(text).toBe(WANT_TEXT);
        expect(args).toEqual(WANT_ARGS);
        await checkUpstreamAndTrace(lastRouteId());
      });
    }
    test(`${model}, not streamed`, async () => {
      script({ text: [], args: [] });
      const client = new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: gw.url } });
      const r = await client.models.generateContent({ model, contents: PROMPT, config: { tools } });
      expect(r.text).toBe(WANT_TEXT);
      expect(r.functionCalls?.[0]?.args).toEqual(WANT_ARGS);
      await checkUpstreamAndTrace(lastRouteId());
    });
  }
});

describe("Responses WebSocket (Codex's transport, SPEC 2.5)", () => {
  test("a follow-up naming an earlier response: the socket's history keeps the client's values, so the reply's placeholders are restored", async () => {
    gw.fake.reset();
    gw.fake.handle((req) => simpleReply(req.format!, { text: req.body.input.length > 1 ? TEXT : "Noted." }, req.stream));
    const c = await connect(gw.url);
    const say = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];
    c.send({ type: "response.create", model: "resp/gpt-test", store: false, input: say(`Mail ${EMAIL} from ${IP} please.`) });
    const first = (await c.untilTerminal()).at(-1);
    expect(first.type).toBe("response.completed");
    c.send({ type: "response.create", model: "resp/gpt-test", store: false, previous_response_id: first.response.id, input: say("Go ahead.") });
    const frames = await c.untilTerminal();
    // The history went upstream redacted again (the same placeholders), and the reply's came back as the values.
    const sent = JSON.stringify(gw.fake.requests.at(-1)!.body);
    expect(sent).toContain("[EMAIL_1]");
    expect(sent).not.toContain(EMAIL);
    expect(frames.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta).join("")).toBe(WANT_TEXT);
    c.ws.close();
  });
});

describe("tool-call arguments: a JSON document inside a string value, and a number", () => {
  // The client's earlier call held a password (quotes and a backslash in it) and a PIN as a number.
  const PW = 'P@ss"word\\1!';
  const HISTORY = [
    { role: "user" as const, content: "log in" },
    { role: "assistant" as const, content: null, tool_calls: [{ id: "c0", type: "function" as const, function: { name: "login", arguments: JSON.stringify({ password: PW, passcode: 4321 }) } }] },
    { role: "tool" as const, tool_call_id: "c0", content: "ok" },
  ];
  // The model answers with a request body (a JSON document in a string) holding the password, and the PIN alone.
  const REPLY_ARGS = { body: JSON.stringify({ pw: "[SECRET_1]" }), passcode: "[SECRET_2]" };
  const REPLY_JSON = JSON.stringify(REPLY_ARGS);
  for (const model of CHAT_MODELS) {
    test(`${model}, streamed in 3-character pieces: the inner document parses to the password, the PIN comes back a number`, async () => {
      gw.fake.reset();
      const pieces = REPLY_JSON.match(/[^]{1,3}/g)!;
      gw.fake.handle((req) => simpleReply(req.format!, { toolCalls: [{ id: "call_1", name: "post", arguments: REPLY_ARGS, argumentPieces: pieces }] }, req.stream));
      const client = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model, messages: HISTORY, stream: true });
      let args = "";
      for await (const c of stream) args += c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "";
      const got = JSON.parse(args);
      expect(JSON.parse(got.body)).toEqual({ pw: PW });
      expect(got.passcode).toBe(4321);
      const sent = JSON.stringify(gw.fake.requests.at(-1)!.body);
      expect(sent).toContain("[SECRET_1]");
      expect(sent).not.toContain("P@ss");
      expect(sent).not.toContain("4321");
    });
  }
});
