/**
 * A reply that ends with nothing in it for a reason that is no finish: Gemini's
 * MALFORMED_FUNCTION_CALL (the model wrote a call Gemini could not parse), UNEXPECTED_TOOL_CALL,
 * TOO_MANY_TOOL_CALLS, OTHER (hub stop reason `other`). REFERENCE §5.1's judgement row says: before the
 * commit point an upstream failure (retry/fallback). Until 2026-12-04 a translated client got it as an
 * empty finished turn (a Messages `end_turn` with no content, a Chat `stop` with `content: null`), which
 * an agent such as Claude Code reads as "the model is done" and stops; Gemini CLI itself retries such a
 * reply. Now it is the empty reply's failure (formats/normalize.ts `unusableFinishError`, code
 * `upstream_empty_reply`, the next combo target; at the last one a 502 the client's SDK retries), JSON
 * or streamed. A Gemini client of a Gemini provider (the native lane) still gets Gemini's own reply.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { DEFAULT_YAML } from "../support/gateway.ts";

const suite = gatewaySuite(
  DEFAULT_YAML +
    `combos:
  - name: gem-then-chat
    targets:
      - model: gem/gemini-x
      - model: chat/gpt-x
`,
);

const malformed = (finishReason = "MALFORMED_FUNCTION_CALL") => ({
  candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason, finishMessage: "Malformed function call: print(default_api.f(a=1", index: 0 }],
  usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 0, totalTokenCount: 10 },
  modelVersion: "gemini-x",
});
const sseOf = (chunk: unknown) => `data: ${JSON.stringify(chunk)}\n\n`;
const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
const messages = (model: string, stream: boolean) => post("/v1/messages", { model, max_tokens: 50, stream, messages: [{ role: "user", content: "hi" }] });
const chat = (model: string, stream: boolean) => post("/v1/chat/completions", { model, stream, messages: [{ role: "user", content: "hi" }] });
const responses = (model: string, stream: boolean) => post("/v1/responses", { model, stream, input: "hi" });

describe("a Gemini reply of nothing that ended with MALFORMED_FUNCTION_CALL", () => {
  for (const upstream of ["streamed", "JSON"] as const) {
    for (const [name, send] of [["Messages", messages], ["Chat", chat]] as const) {
      for (const stream of [true, false]) {
        test(`${upstream} upstream, ${name} client${stream ? ", streaming" : ""}: 502 naming the reason, not an empty finished turn; the empty reply row`, async () => {
          suite.gw.fake.enqueue(upstream === "JSON" ? { json: malformed() } : { sse: sseOf(malformed()) });
          const res = await send("gem/gemini-x", stream);
          const text = await res.text();
          expect(text).not.toContain("end_turn");
          expect(text).not.toContain('"finish_reason":"stop"');
          expect(res.status).toBe(502);
          const body = JSON.parse(text);
          expect(body.error.message).toBe("The upstream ended its reply with nothing in it, giving MALFORMED_FUNCTION_CALL as the reason: not a finished reply.");
          expect(suite.gw.fake.requests.length).toBe(1);
          const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
          expect(trace.attempts.map((a) => a.classification)).toEqual(["empty_reply"]);
        });
      }
    }
  }

  test("in a combo: the next target serves the reply, with X-Switchyard-Fallback", async () => {
    suite.gw.fake.enqueue({ sse: sseOf(malformed("UNEXPECTED_TOOL_CALL")) });
    const res = await messages("gem-then-chat", true);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-fallback")).toBe("1");
    const text = await res.text();
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join("");
    expect(deltas).toBe("Hello from the fake upstream.");
    expect(text).toContain('"stop_reason":"end_turn"');
    expect(suite.gw.fake.requests.map((r) => r.format)).toEqual(["gemini", "openai-chat"]);
  });

  // A reply read whole before the commit point (a non-streaming client, or a JSON upstream): REFERENCE
  // §5.1's pre-commit rule, an upstream failure, text or not (until 2026-12-07 a finished turn).
  for (const upstream of ["streamed", "JSON"] as const) {
    for (const [name, send, stream] of [["Messages", messages, false], ["Chat", chat, false], ["Responses", responses, false], ["Chat, streaming", chat, true]] as const) {
      if (upstream === "streamed" && stream) continue;
      test(`text before MALFORMED_FUNCTION_CALL, ${upstream} upstream, ${name} client: 502 naming the reason, not a finished turn; the next combo target serves`, async () => {
        const chunk = malformed();
        chunk.candidates[0].content.parts = [{ text: "Partly done." }];
        suite.gw.fake.enqueue(upstream === "JSON" ? { json: chunk } : { sse: sseOf(chunk) });
        const res = await send("gem/gemini-x", stream);
        const text = await res.text();
        expect(res.status).toBe(502);
        expect(text).not.toContain("Partly done.");
        expect(JSON.parse(text).error.message).toBe("The upstream broke off its reply, giving MALFORMED_FUNCTION_CALL as the reason: not a finished reply.");
        const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
        expect(trace.attempts.map((a) => a.classification)).toEqual(["empty_reply"]);

        suite.gw.fake.enqueue(upstream === "JSON" ? { json: chunk } : { sse: sseOf(chunk) });
        const served = await send("gem-then-chat", stream);
        expect(served.status).toBe(200);
        expect(served.headers.get("x-switchyard-fallback")).toBe("1");
        const body = await served.text();
        expect(body).not.toContain("Partly done.");
        const said = stream ? [...body.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join("") : body;
        expect(said).toContain("Hello from the fake upstream.");
        expect(suite.gw.fake.requests.map((r) => r.format)).toEqual(["gemini", "gemini", "openai-chat"]);
      });
    }
  }

  // After the commit point (text already streamed): SPEC 6.4, never passed off as finished. The
  // client's format's in-band error, as a cut stream gets (until 2026-12-07 `end_turn` / `stop`).
  const UNFINISHED = "The upstream broke off its reply, giving MALFORMED_FUNCTION_CALL as the reason: not a finished reply.";
  for (const [name, send, ended] of [
    ["Messages", messages, (t: string) => t.includes("event: error") && t.includes(UNFINISHED) && !t.includes("end_turn") && !t.includes("message_stop")],
    ["Chat", chat, (t: string) => t.includes(`"message":"${UNFINISHED}"`) && !t.includes('"finish_reason":"stop"')],
    ["Responses", responses, (t: string) => t.includes("response.failed") && t.includes(UNFINISHED) && !t.includes("response.completed")],
  ] as const) {
    test(`text streamed, then MALFORMED_FUNCTION_CALL, ${name} client: the text, then the format's in-band error naming the reason; the row and trace say it failed`, async () => {
      const first = { candidates: [{ content: { role: "model", parts: [{ text: "Partly " }] }, index: 0 }], modelVersion: "gemini-x" };
      const chunk = malformed();
      chunk.candidates[0].content.parts = [{ text: "done." }];
      suite.gw.fake.enqueue({ sse: sseOf(first) + sseOf(chunk), split_at: [Buffer.byteLength(sseOf(first))], delay_ms: 30 });
      const res = await send("gem/gemini-x", true);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain("Partly ");
      expect(ended(text)).toBe(true);
      const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
      expect(trace.outcome).not.toBe("ok");
      suite.gw.app.settle();
      let row: { outcome?: string } | undefined;
      for (const end = Date.now() + 15_000; !row && Date.now() < end; await Bun.sleep(50)) {
        const calls = ((await (await fetch(`${suite.gw.url}/admin/api/calls?limit=50`)).json()) as { calls: Array<{ requestId: string; outcome: string }> }).calls;
        row = calls.find((c) => c.requestId === res.headers.get("x-request-id"));
      }
      expect(row?.outcome).toBe("upstream_error");
    });
  }

  test("a Gemini client of the Gemini provider (native lane) gets Gemini's own reply, to retry as Gemini CLI does", async () => {
    suite.gw.fake.enqueue({ sse: sseOf(malformed()) });
    const res = await post("/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"finishReason":"MALFORMED_FUNCTION_CALL"');
  });
});
