/**
 * A Chat Completions JSON reply with `choices: []` (formats/openai-chat/response.ts `noChoicesReply`;
 * a 502 "not a Chat Completions body" until this was fixed): Azure OpenAI's reply whose prompt its
 * content filter held (`prompt_filter_results`), or a compatible server's degenerate 200. With a filter
 * result saying `filtered: true` it is a refusal: a native Chat client gets the upstream's reply (the
 * body as it came; a streaming client as one chunk and `[DONE]`), a translated client an empty reply
 * whose stop reason is a refusal. Without one it is an empty reply (no content, no finish reason),
 * the same failure JSON or streamed (pipeline/commit.ts; README "Not done yet" until this was fixed: at
 * the last target the JSON reply was an empty 200, the stream a 502): 502 `upstream_empty_reply`, the
 * next target, and at the last one the client's error (SPEC 6.3; 6.4 and F-6: a 200 would pass a reply
 * that never finished off as a finished one, and nothing is invented).
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

const filterResults = (filtered: boolean) => [
  { prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: "safe" }, violence: { filtered, severity: filtered ? "high" : "safe" } } },
];
const noChoices = (filtered: boolean) => ({
  id: "chatcmpl-azure",
  object: "chat.completion",
  created: 1750000000,
  model: "gpt-x",
  choices: [],
  prompt_filter_results: filterResults(filtered),
  usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 },
});
const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

describe("a Chat reply with choices: []", () => {
  test("native Chat client: the upstream's body as it came", async () => {
    suite.gw.fake.enqueue({ json: noChoices(true) });
    const res = await post("/v1/chat/completions", { model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(noChoices(true));
  });

  test("native streaming Chat client whose upstream answered with JSON, the prompt filtered: one chunk with choices: [] and the filter results, the usage chunk it asked for, [DONE]", async () => {
    suite.gw.fake.enqueue({ json: noChoices(true) });
    const res = await post("/v1/chat/completions", { model: "oai/gpt-x", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const frames = (await res.text()).trimEnd().split("\n\n");
    expect(frames).toHaveLength(3);
    const { usage, ...rest } = noChoices(true);
    expect(JSON.parse(frames[0].slice(6))).toEqual({ ...rest, object: "chat.completion.chunk" });
    expect(JSON.parse(frames[1].slice(6))).toEqual({ id: "chatcmpl-azure", object: "chat.completion.chunk", created: 1750000000, model: "gpt-x", choices: [], usage });
    expect(frames[2]).toBe("data: [DONE]");
  });

  test("translated (Messages client): a filtered prompt is an empty reply with stop_reason refusal", async () => {
    suite.gw.fake.enqueue({ json: noChoices(true) });
    const res = await post("/v1/messages", { model: "oai/gpt-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ type: "message", role: "assistant", content: [], stop_reason: "refusal", usage: { input_tokens: 12, output_tokens: 0 } });
  });

});

/**
 * The same reply streamed: a Chat stream of only `choices: []` chunks (Azure's first chunk with the
 * prompt filter results, the usage chunk) then `[DONE]`. It used to end, translated, with "The
 * upstream stream ended before the reply was complete." (a truncation, retried on the same account);
 * it is now read as the JSON body is (formats/openai-chat/decoder.ts `end`).
 */
describe("a Chat stream of only choices: [] chunks", () => {
  const chunk = (o: Record<string, unknown>) => `data: ${JSON.stringify({ id: "chatcmpl-azure", object: "chat.completion.chunk", created: 1750000000, model: "gpt-x", ...o })}\n\n`;
  const stream = (filtered: boolean) =>
    // Azure's first chunk has an empty id and model.
    `data: ${JSON.stringify({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: filterResults(filtered) })}\n\n` +
    chunk({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 } }) +
    "data: [DONE]\n\n";
  /** Each SSE event's name, in order. */
  const names = (text: string) => [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);

  test("translated streaming client (Messages), the prompt filtered: an empty reply that ends as a refusal, no error", async () => {
    suite.gw.fake.enqueue({ sse: stream(true) });
    const res = await post("/v1/messages", { model: "oai/gpt-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(names(text)).toEqual(["message_start", "message_delta", "message_stop"]);
    expect(text).toContain('"stop_reason":"refusal"');
    expect(text).toContain('"input_tokens":12');
    expect(suite.gw.fake.requests.length).toBe(1);
  });

  test("translated non-streaming client (Messages) of the stream, the prompt filtered: the empty reply with stop_reason refusal", async () => {
    suite.gw.fake.enqueue({ sse: stream(true) });
    const res = await post("/v1/messages", { model: "oai/gpt-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ type: "message", content: [], stop_reason: "refusal", usage: { input_tokens: 12, output_tokens: 0 } });
  });

  test("translated (Chat client of a Chat-compatible provider, read through the hub): finish_reason content_filter", async () => {
    suite.gw.fake.enqueue({ sse: stream(true) });
    const res = await post("/v1/chat/completions", { model: "chat/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"finish_reason":"content_filter"');
    expect(text).not.toContain('"error"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  test("native streaming Chat client, the prompt filtered: the chunks as they came (the usage chunk it did not ask for withheld) and [DONE], no error frame", async () => {
    suite.gw.fake.enqueue({ sse: stream(true) });
    const res = await post("/v1/chat/completions", { model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const frames = (await res.text()).trimEnd().split("\n\n");
    expect(frames).toEqual([stream(true).split("\n\n")[0], "data: [DONE]"]);
    expect(suite.gw.fake.requests.length).toBe(1);
  });
});

describe("without a filter result that says why: the same empty reply's failure, JSON or streamed, for every client", () => {
  const sse =
    `data: ${JSON.stringify({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: filterResults(false) })}\n\n` +
    `data: ${JSON.stringify({ id: "chatcmpl-azure", object: "chat.completion.chunk", created: 1750000000, model: "gpt-x", choices: [], usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 } })}\n\n` +
    "data: [DONE]\n\n";
  const clients = [
    { name: "native Chat", path: "/v1/chat/completions", body: { model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] } },
    { name: "translated Messages", path: "/v1/messages", body: { model: "oai/gpt-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] } },
  ];
  for (const upstream of ["JSON", "streamed"] as const) {
    for (const c of clients) {
      for (const stream of [false, true]) {
        test(`${upstream} upstream, ${c.name} client${stream ? ", streaming" : ""}: 502, no content and no finish reason, one upstream call, the empty reply row`, async () => {
          suite.gw.fake.enqueue(upstream === "JSON" ? { json: noChoices(false) } : { sse });
          const res = await post(c.path, { ...c.body, stream });
          expect(res.status).toBe(502);
          expect(((await res.json()) as any).error.message).toEndWith("no content and no finish reason.");
          expect(suite.gw.fake.requests.length).toBe(1);
          const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
          expect(trace.attempts.map((a) => a.classification)).toEqual(["empty_reply"]);
        });
      }
    }
  }
});
