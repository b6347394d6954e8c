/**
 * The route trace of a reply that failed after the commit point (SPEC 6.4: the stream was cut, the
 * upstream sent an in-band error or an event that is not JSON, after the client had content): its
 * outcome is `upstream_error`, and since 2026-12-04 its served attempt's `error` is the in-band error
 * the client's stream ended with. Before, the trace (`switchyard calls inspect`, the admin API's
 * `/traces/{id}`, the dashboard's call view) said only "upstream_error 200" and an attempt "→ 200" with
 * no error anywhere, so an operator could not tell why an agent's reply broke off.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const start = ev("message_start", { type: "message_start", message: { id: "msg_t", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
const text =
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is" } });
const overloaded = ev("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
const notJson = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n';

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
const messages = (model: string) => post("/v1/messages", { model, max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
const chat = (model: string) => post("/v1/chat/completions", { model, stream: true, messages: [{ role: "user", content: "hi" }] });

/** The stored trace of a reply, once its report has run. */
async function traceOf(res: Response) {
  suite.gw.app.settle();
  return (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
}

describe("a reply that failed after the commit point: the trace names the error its client got", () => {
  const cases = [
    { name: "cut stream, native Messages lane", sse: start + text, send: () => messages("anth/claude-x"), error: "The upstream stream ended before the reply was complete." },
    { name: "cut stream, translated (Chat client)", sse: start + text, send: () => chat("anth/claude-x"), error: "The upstream stream ended before the reply was complete." },
    { name: "in-band overloaded error, native Messages lane", sse: start + text + overloaded, send: () => messages("anth/claude-x"), error: "Overloaded" },
    { name: "in-band overloaded error, translated (Chat client)", sse: start + text + overloaded, send: () => chat("anth/claude-x"), error: "Overloaded" },
    { name: "an event that is not JSON, translated (Chat client)", sse: start + text + notJson, send: () => chat("anth/claude-x"), error: "The upstream sent an event that is not JSON." },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      suite.gw.fake.enqueue({ sse: c.sse });
      const res = await c.send();
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toContain(c.error);
      const trace = await traceOf(res);
      expect(trace.outcome).toBe("upstream_error");
      expect(trace.attempts).toHaveLength(1);
      expect(trace.attempts[0]).toMatchObject({ status: 200, error: c.error });
      // Still a served reply: no error answer of the request (RouteTrace.error is for no reply served).
      expect(trace.error).toBeUndefined();
    });
  }

  test("a reply that finished has no error in its trace", async () => {
    suite.gw.fake.enqueue({ sse: start + text + ev("content_block_stop", { type: "content_block_stop", index: 0 }) + ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }) + ev("message_stop", { type: "message_stop" }) });
    const res = await chat("anth/claude-x");
    await res.text();
    const trace = await traceOf(res);
    expect(trace.outcome).toBe("ok");
    expect(trace.attempts[0]!.error).toBeUndefined();
  });
});
