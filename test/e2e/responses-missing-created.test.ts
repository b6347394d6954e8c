/**
 * A native Responses stream from an upstream that never sends `response.created` (recorded
 * openai-responses/incomplete-max-output-tokens.sse, from a third-party Responses server: an output
 * item first, then `response.incomplete`; sdk16 S5). The OpenAI SDK's `responses.stream()` throws on
 * any other first event ("When snapshot hasn't been set yet, expected 'response.created' event"); the
 * passthrough now puts a `response.created` before the first event, so the SDK reads the reply:
 * `incomplete`, `max_output_tokens`. The rest goes out re-serialised (formats/openai-responses/tap.ts
 * `repair`, since 2026-12-07): sequence numbers one higher, so they rise after the made event (it and
 * the first event both had 0), and the terminal `response.incomplete`, which has no `output`, with the
 * item the stream opened (openai 6.x takes the terminal's response whole and threw "rsp.output is not
 * iterable"; 7.x builds the same output itself). Real gateway, fake upstream.
 */
import { expect, test } from "bun:test";
import OpenAI from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";

const suite = gatewaySuite();
const SSE = new TextDecoder().decode(await recordedBytes("openai-responses/incomplete-max-output-tokens.sse"));

test("the client gets one made response.created (no id, as the stream's own events have none), then the upstream's events, numbered after it, the terminal with its output", async () => {
  suite.gw.fake.handle(() => ({ sse: SSE }));
  const res = await fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "resp/gpt-5", stream: true, input: "x" }) });
  expect(res.status).toBe(200);
  const text = await res.text();
  const first = text.indexOf("\n\n") + 2;
  const frames = text.split("\n\n").filter(Boolean);
  const recorded = SSE.split("\n\n").filter(Boolean);
  const dataOf = (frame: string) => JSON.parse(frame.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
  expect(frames.map((f) => f.split("\n")[0])).toEqual(["event: response.created", ...recorded.map((f) => f.split("\n")[0])]);
  expect(frames.map((f) => dataOf(f).sequence_number)).toEqual([0, 1, 2]);
  const item = dataOf(recorded[0]!).item;
  expect(dataOf(frames[1]!)).toEqual({ ...dataOf(recorded[0]!), sequence_number: 1 });
  expect(dataOf(frames[2]!)).toEqual({ ...dataOf(recorded[1]!), sequence_number: 2, response: { ...dataOf(recorded[1]!).response, output: [item] } });
  const head = text.slice(0, first);
  expect(head.startsWith("event: response.created\ndata: ")).toBe(true);
  const created = JSON.parse(head.split("\n")[1]!.slice(6));
  expect(created).toEqual({
    type: "response.created",
    sequence_number: 0,
    response: { object: "response", status: "in_progress", model: null, output: [], usage: null, error: null, incomplete_details: null },
  });
});

test("the OpenAI SDK's responses.stream().finalResponse() reads it: incomplete, max_output_tokens, the reasoning item", async () => {
  suite.gw.fake.handle(() => ({ sse: SSE }));
  const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
  const r = await openai.responses.stream({ model: "resp/gpt-5", input: "x" }).finalResponse();
  expect(r.status).toBe("incomplete");
  expect(r.incomplete_details?.reason).toBe("max_output_tokens");
  expect(r.output.map((o) => o.type)).toEqual(["reasoning"]);
});

test("a stream that starts with response.created is forwarded as it came (nothing added)", async () => {
  const sse = new TextDecoder().decode(await recordedBytes("openai-responses/text.sse"));
  suite.gw.fake.handle(() => ({ sse }));
  const res = await fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "resp/gpt-5", stream: true, input: "x" }) });
  expect(await res.text()).toBe(sse);
});
