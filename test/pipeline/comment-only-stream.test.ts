/**
 * Found by a review (session 45; fixed that session; low; a consistency question for the lead). A 2xx stream that ends before its
 * first byte, and (874f3cf4) a Chat stream of `data: [DONE]` alone, are an empty reply (SPEC 6.3's last
 * row: one call, 502 upstream_empty_reply, no same-account retry, no cooldown, the next target):
 * "nothing was begun, so nothing was cut". A stream whose only bytes are an SSE comment (a keep-alive
 * `: keepalive`, with or without a BOM; labelled text/event-stream or, through pipeline/sse-sniff.ts,
 * unlabelled) then ends carries no event either, but pipeline/commit.ts counts its bytes
 * (`unusableReply(e, peeked === 0 && contentless === 0)`), so it is the cut-stream 5xx row: 4 calls on
 * the same account, 502 upstream_truncated "ended before the reply was complete", and the model cools
 * down (the next request gets 503 no_account "cooling down (upstream 502)").
 *
 * Expected (as `[DONE]` alone): 502 upstream_empty_reply after 1 call, and the next request reaches
 * the upstream again. Before the fix: 4 calls, upstream_truncated, then 503 no_account.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["oai", "openai"]]));
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

async function chat(model: string): Promise<{ status: number; code: string | undefined }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code };
}

for (const [name, reply] of [
  ["control: data: [DONE] alone (passes)", { sse: "data: [DONE]\n\n" }],
  ["a keep-alive comment only", { sse: ": keepalive\n\n" }],
  ["a BOM and a comment only, labelled text/plain", { text: "\ufeff: keepalive\n\n", headers: { "content-type": "text/plain" } }],
] as const) {
  test(`${name}: an empty reply (one call, upstream_empty_reply, no cooldown)`, async () => {
    const model = `oai/m-${name.length}`;
    gw.fake.reset();
    gw.fake.handle(() => reply);
    const first = await chat(model);
    const calls = gw.fake.requests.length;
    const second = await chat(model);
    expect({ first, calls, secondReachedUpstream: gw.fake.requests.length > calls }).toEqual({ first: { status: 502, code: "upstream_empty_reply" }, calls: 1, secondReachedUpstream: true });
  });
}
