/**
 * A native Responses reply (Responses client, `openai-responses` provider) whose upstream stream breaks
 * mid-reply: the gateway closes it with an `error` event, then `response.failed` carrying the items
 * completed so far (formats/openai-responses/tap.ts `closing`), as the translated lanes do and as
 * OpenAI's own failed stream does (recorded openai-responses/error-event.sse). The official OpenAI SDK
 * throws on it — `responses.stream().finalResponse()` and a raw `for await` alike — instead of
 * resolving a "failed" response whose partial text an app would take as the answer (until 2026-12-07
 * the native lane sent `response.failed` alone, with `output: []`). Real gateway, fake upstream.
 */
import { expect, test } from "bun:test";
import OpenAI, { APIError } from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";

const suite = gatewaySuite();
const WHOLE = new TextDecoder().decode(await recordedBytes("openai-responses/text.sse"));
/** The recorded reply up to the middle of its third text delta: the upstream's connection ends there. */
const CUT = WHOLE.slice(0, WHOLE.indexOf('"delta":" file"'));
const openai = () => new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
const MESSAGE = "The upstream stream ended before the reply was complete.";

// `oai`: kind openai, where a Responses client is served natively by the provider's Responses API.
for (const model of ["resp/gpt-5", "oai/gpt-5"]) {
  test(`${model}: responses.stream().finalResponse() rejects with the gateway's message; the text so far came as deltas`, async () => {
    suite.gw.fake.handle(() => ({ sse: CUT }));
    const stream = openai().responses.stream({ model, input: "x" });
    let deltas = "";
    stream.on("response.output_text.delta", (e) => (deltas += e.delta));
    const outcome = await stream.finalResponse().then(
      (r) => ({ resolved: r.status }),
      (e: unknown) => ({ rejected: e instanceof APIError ? e.message : String(e) }),
    );
    expect(outcome).toEqual({ rejected: MESSAGE });
    expect(deltas.length).toBeGreaterThan(0);
  });
}

test("a raw for await over responses.create({stream: true}) throws an APIError after the text so far", async () => {
  suite.gw.fake.handle(() => ({ sse: CUT }));
  const types: string[] = [];
  let thrown: unknown;
  try {
    for await (const ev of await openai().responses.create({ model: "resp/gpt-5", input: "x", stream: true })) types.push(ev.type);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(APIError);
  expect((thrown as APIError).message).toBe(MESSAGE);
  expect(types).toContain("response.output_text.delta");
  expect(types).not.toContain("response.failed"); // the SDK threw at the error event before it
});

test("the wire: the upstream's whole events, then error and response.failed with the next sequence numbers", async () => {
  suite.gw.fake.handle(() => ({ sse: CUT }));
  const res = await fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "resp/gpt-5", stream: true, input: "x" }) });
  const events = (await res.text()).split("\n\n").filter(Boolean).map((e) => JSON.parse(e.split("\n").find((l) => l.startsWith("data: "))!.slice(6)));
  expect(events.slice(-3).map((e) => [e.type, e.sequence_number])).toEqual([
    ["response.output_text.delta", 5],
    ["error", 6],
    ["response.failed", 7],
  ]);
  expect(events.at(-1).response).toMatchObject({ status: "failed", error: { code: "server_error", message: MESSAGE }, output: [] });
});
