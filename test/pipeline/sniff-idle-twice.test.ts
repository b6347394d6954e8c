/**
 * Found by a review (session 45; fixed that session; low). pipeline/sse-sniff.ts waits up to the provider's idle timeout for the first
 * bytes that tell an unlabelled reply (text/plain, octet-stream, no Content-Type) is SSE; when they do
 * not come (here one byte, `d`, then silence), the reply goes on to the commit point, whose own idle
 * deadline starts then: the upstream's silence is borne twice the configured `idle_timeout_ms` per
 * attempt. With idle_timeout_ms 1000 a silent labelled stream fails after 4 attempts in ~5.2 s, the same
 * stream labelled text/plain in ~8.7 s (seen). With a slow provider's 180 s that is 6 min more per
 * attempt before the client hears of it.
 *
 * Expected: the unlabelled stream fails as soon as the labelled one (within 1 s of it). Before the fix: ~3.5 s
 * later (4 attempts × 1 s idle more, minus the shared back-off).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { startFakeUpstream } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  const yaml = `
providers:
  - id: p
    kind: openai
    base_url: "{{FAKE}}/v1"
    idle_timeout_ms: 1000
accounts:
  - id: p-1
    provider: p
    api_key: env:KEY_A
`;
  gw = await startGateway(yaml, { env: { KEY_A: "sk-test-aaaaaaaaaaaa" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

/** ms until a streamed request to a silent upstream (one byte, then nothing) with that Content-Type fails, and its status. */
async function silentFor(type: string): Promise<{ ms: number; status: number; code: string | undefined }> {
  gw.fake.reset();
  gw.fake.handle(() => ({ sse: "data: {}\n\n", stall_after_bytes: 1, headers: { "content-type": type } }));
  const t0 = Date.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: `p/m-${type.replace("/", "-")}`, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  return { ms: Date.now() - t0, status: res.status, code: body.error?.code };
}

test("an unlabelled silent stream is given up on as soon as a labelled one", async () => {
  const labelled = await silentFor("text/event-stream");
  const unlabelled = await silentFor("text/plain");
  expect([labelled.status, labelled.code, unlabelled.status, unlabelled.code]).toEqual([504, "timeout", 504, "timeout"]);
  expect({ labelledMs: labelled.ms, unlabelledWithin1sOfIt: unlabelled.ms - labelled.ms <= 1000, unlabelledMs: unlabelled.ms }).toEqual({ labelledMs: labelled.ms, unlabelledWithin1sOfIt: true, unlabelledMs: unlabelled.ms });
}, 40_000);
