/**
 * An Anthropic `refusal` stop whose `stop_details.explanation` says why (recorded fixture
 * anthropic-messages/refusal.json / .sse: no content at all) keeps that explanation for clients of the
 * other formats (sdk16 S3: they got an empty reply with only a content-filter finish): a Chat client
 * reads it as `message.refusal` (`delta.refusal` streamed) with `finish_reason: content_filter`, a
 * Responses client as a message's `refusal` part (`incomplete`, `content_filter`), a Gemini client as
 * `finishMessage` beside `finishReason: SAFETY`. Streamed and not. Real gateway, fake upstream.
 */
import { expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";

const suite = gatewaySuite();

const EXPLANATION = "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy.";
const MODEL = "anth/claude-fable-5";

async function replayRefusal(): Promise<void> {
  const json = JSON.parse(new TextDecoder().decode(await recordedBytes("anthropic-messages/refusal.json")));
  const sse = new TextDecoder().decode(await recordedBytes("anthropic-messages/refusal.sse"));
  suite.gw.fake.handle((r) => (r.stream ? { sse } : { json }));
}

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** The parsed `data:` payloads of an SSE body (`[DONE]` left out). */
async function dataOf(res: Response): Promise<any[]> {
  const out: any[] = [];
  for (const line of (await res.text()).split("\n")) if (line.startsWith("data: ") && line !== "data: [DONE]") out.push(JSON.parse(line.slice(6)));
  return out;
}

test("Chat: message.refusal is the explanation, finish_reason content_filter; streamed, delta.refusal before the finish", async () => {
  await replayRefusal();
  const whole = await post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content: "x" }] });
  expect(whole.status).toBe(200);
  const body = (await whole.json()) as { choices: Array<{ message: unknown; finish_reason: string }> };
  expect(body.choices[0].message).toEqual({ role: "assistant", content: null, refusal: EXPLANATION });
  expect(body.choices[0].finish_reason).toBe("content_filter");

  const streamed = await post("/v1/chat/completions", { model: MODEL, stream: true, messages: [{ role: "user", content: "x" }] });
  const choices = (await dataOf(streamed)).flatMap((c) => c.choices ?? []).map((c: any) => [c.delta, c.finish_reason]);
  expect(choices).toEqual([
    [{ role: "assistant", content: "" }, null],
    [{ refusal: EXPLANATION }, null],
    [{}, "content_filter"],
  ]);
});

test("Responses: a message whose refusal part is the explanation, the response incomplete (content_filter); streamed with refusal events", async () => {
  await replayRefusal();
  const whole = await post("/v1/responses", { model: MODEL, input: "x" });
  expect(whole.status).toBe(200);
  const body = (await whole.json()) as { status: string; incomplete_details: unknown; output: Array<{ type: string; content: unknown }> };
  expect([body.status, body.incomplete_details]).toEqual(["incomplete", { reason: "content_filter" }]);
  expect(body.output.map((o) => [o.type, o.content])).toEqual([["message", [{ type: "refusal", refusal: EXPLANATION }]]]);

  const streamed = await post("/v1/responses", { model: MODEL, stream: true, input: "x" });
  const events = await dataOf(streamed);
  expect(events.find((e) => e.type === "response.refusal.done")?.refusal).toBe(EXPLANATION);
  const last = events.at(-1);
  expect([last.type, last.response.incomplete_details]).toEqual(["response.incomplete", { reason: "content_filter" }]);
  expect(last.response.output.map((o: any) => o.content)).toEqual([[{ type: "refusal", refusal: EXPLANATION }]]);
});

test("Gemini: finishMessage is the explanation beside finishReason SAFETY, streamed and not", async () => {
  await replayRefusal();
  const whole = await post(`/v1beta/models/${encodeURIComponent(MODEL)}:generateContent`, { contents: [{ role: "user", parts: [{ text: "x" }] }] });
  expect(whole.status).toBe(200);
  const body = (await whole.json()) as { candidates: Array<{ finishReason: string; finishMessage?: string }> };
  expect([body.candidates[0].finishReason, body.candidates[0].finishMessage]).toEqual(["SAFETY", EXPLANATION]);

  const streamed = await post(`/v1beta/models/${encodeURIComponent(MODEL)}:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "x" }] }] });
  const last = (await dataOf(streamed)).at(-1);
  expect([last.candidates[0].finishReason, last.candidates[0].finishMessage]).toEqual(["SAFETY", EXPLANATION]);
});
