/**
 * Found by a review (session 45; fixed that session). Commit 27b19762 stops reading a native Chat stream at its first `data: [DONE]`
 * (PassthroughDriver.cut), because "a server that kept the connection open after [DONE] held the
 * client's stream open until the idle/keep-alive bound". The translated lanes reading the same Chat
 * upstream (formats/openai-chat/decoder.ts under pipeline/commit.ts) still read on after `[DONE]`: an
 * Anthropic Messages client (Claude Code) has `content_block_stop` but never gets `message_delta` /
 * `message_stop`, and a Responses client (Codex) through an openai-compatible (Chat-only) provider gets
 * its text but no `response.completed`, while the upstream sends
 * keep-alive comments after `[DONE]` without closing.
 *
 * Expected: as on the native pair, the client's stream ends (message_stop / response.completed) soon
 * after the upstream's `[DONE]`. Before the fix: still open after 5 s (the same on c4c7e180: not a
 * regression). Fixed: the Chat decoder's [DONE] ends the reply (StreamDecoder.sawEndMarker, DecodingDriver.cut).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["oai", "openai"], ["oc", "openai-compatible"]]));
});
afterAll(async () => {
  await gw?.stop();
});

/** The client's stream as read within `ms`, and whether it ended by then. */
async function readFor(path: string, body: unknown, ms: number): Promise<{ ended: boolean; text: string }> {
  const ac = new AbortController();
  let text = "";
  const read = (async () => {
    const res = await fetch(`${gw.url}${path}`, { method: "POST", signal: ac.signal, headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const r = await reader.read();
      if (r.done) return true;
      text += dec.decode(r.value, { stream: true });
    }
  })();
  const ended = await Promise.race([read, Bun.sleep(ms).then(() => false)]);
  ac.abort();
  await read.catch(() => {});
  return { ended, text };
}

const reply = simpleReply("openai-chat", { text: "Done, but open.", model: "gpt-test" }, true);

test("Messages client ← Chat upstream open after [DONE]: the client's stream ends with message_stop", async () => {
  gw.fake.enqueue({ sse: reply.sse, endless: ": keep-alive\n\n", endless_every_ms: 20 });
  const r = await readFor("/v1/messages", { model: "oai/gpt-test", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, 5_000);
  expect(gw.fake.requests.at(-1)?.path).toBe("/v1/chat/completions");
  expect(r.text).toContain("content_block_stop");
  expect({ ended: r.ended, messageStop: r.text.includes("event: message_stop") }).toEqual({ ended: true, messageStop: true });
}, 20_000);

test("Responses client ← Chat upstream (openai-compatible: Chat only) open after [DONE]: the client's stream ends with response.completed", async () => {
  gw.fake.enqueue({ sse: reply.sse, endless: ": keep-alive\n\n", endless_every_ms: 20 });
  const r = await readFor("/v1/responses", { model: "oc/gpt-test", stream: true, input: "hi" }, 5_000);
  expect(gw.fake.requests.at(-1)?.path).toBe("/v1/chat/completions");
  expect(r.text).toContain("response.output_text.delta");
  expect({ ended: r.ended, completed: r.text.includes("response.completed") }).toEqual({ ended: true, completed: true });
}, 20_000);

test("control: the same replies with the upstream closing after [DONE] end at once (passes)", async () => {
  gw.fake.enqueue({ sse: reply.sse });
  const m = await readFor("/v1/messages", { model: "oai/gpt-test", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, 5_000);
  expect({ ended: m.ended, messageStop: m.text.includes("event: message_stop") }).toEqual({ ended: true, messageStop: true });
  gw.fake.enqueue({ sse: reply.sse });
  const r = await readFor("/v1/responses", { model: "oc/gpt-test", stream: true, input: "hi" }, 5_000);
  expect({ ended: r.ended, completed: r.text.includes("response.completed") }).toEqual({ ended: true, completed: true });
}, 20_000);
