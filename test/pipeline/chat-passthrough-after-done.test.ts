/**
 * Found by a provider tryout (session 45; fixed that session): on the native Chat pair (Chat client → `openai` provider,
 * passthrough, SPEC F-3) what an upstream sends after its `data: [DONE]` reaches the client: a second
 * `data: [DONE]` (some OpenAI-compatible servers and proxies end twice), and a line of trailing
 * garbage (`this is not sse {{{`). SPEC F-5 says every stream the gateway emits is valid for the SDKs,
 * Chat with "`[DONE]` once"; the passthrough re-frames events (a BOM and CR-only line ends from the same
 * upstream are normalised), so the stream after `[DONE]` could be dropped the same way. The OpenAI SDK
 * stops reading at the first `[DONE]`, so this is cosmetic for it; a hand-written client that reads to
 * the end of the stream sees an event after the end. Likely in the Chat tap
 * (formats/openai-chat/tap.ts: "bytes go to the client unchanged while the tap reads … `[DONE]`"), which
 * keeps forwarding after it has read `[DONE]`.
 *
 * Expected: the client's stream ends with exactly one `data: [DONE]` and nothing after it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["oai", "openai"]]));
});
afterAll(async () => {
  await gw?.stop();
});

async function chatStream(): Promise<string> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/gpt-test", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

for (const [what, tail] of [
  ["a second [DONE]", "data: [DONE]\n\n"],
  ["trailing garbage", "this is not sse {{{\n\n"],
] as const) {
  test(`upstream sends ${what} after [DONE]: the client's stream ends at one [DONE]`, async () => {
    const reply = simpleReply("openai-chat", { text: "Done twice.", model: "gpt-test" }, true);
    // in the same read as the first [DONE], and in reads of their own (the tail split in two)
    for (const split of [undefined, [reply.sse!.length, reply.sse!.length + 3]]) {
      gw.fake.enqueue({ sse: reply.sse + tail, split_at: split });
      const text = await chatStream();
      expect(text.split("data: [DONE]").length - 1).toBe(1);
      expect(text.slice(text.indexOf("data: [DONE]") + "data: [DONE]".length).trim()).toBe("");
      expect(text).toContain('"content":"Done ');
    }
  });
}

// The upstream read after [DONE] went on until the upstream closed the stream, though nothing of it
// reaches the client: a server that keeps the connection open after [DONE] (keep-alive comments,
// here without end) held the client's stream open until the idle or keep-alive bound. Now the read is
// cancelled at the first [DONE] (PassthroughDriver.cut) and the stream ends there.
test("upstream keeps sending after [DONE] without closing: the client's stream ends at [DONE], the upstream read is cancelled", async () => {
  const reply = simpleReply("openai-chat", { text: "Done, but open.", model: "gpt-test" }, true);
  for (const split of [undefined, [reply.sse!.length - 5]]) {
    gw.fake.enqueue({ sse: reply.sse, split_at: split, endless: ": keep-alive\n\n", endless_every_ms: 20 });
    const timeout = Bun.sleep(5_000).then(() => "still open after 5 s");
    const text = await Promise.race([chatStream(), timeout]);
    expect(text).toContain('"content":"Done, ');
    expect(text.split("data: [DONE]").length - 1).toBe(1);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  }
}, 20_000);
