/**
 * An unlabelled reply (no Content-Type, text/plain, octet-stream) to a streamed request is sniffed for
 * SSE (pipeline/sse-sniff.ts) for at most the provider's idle timeout. Found in review: one that sends
 * nothing at all was waited for twice, the sniff's idle timeout and then a whole one more at the commit
 * point's idle deadline, so a silent upstream held the attempt for up to twice `idle_timeout_ms`. Here
 * the upstream sends one blank line (which cannot tell SSE from JSON yet) and then nothing: the fake
 * upstream sends its headers with its first bytes.
 * Expected: one deadline, the silence the sniff saw counting toward the commit point's (failed before
 * the fix: the attempt took ~2 idle timeouts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";

/** The `delta.content` pieces of a Chat stream, joined. */
function chatText(sse: string): string {
  let out = "";
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    out += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  }
  return out;
}

const IDLE_MS = 1000;
const YAML = `
providers:
  - id: p
    kind: openai
    base_url: "{{FAKE}}/p/v1"
    idle_timeout_ms: ${IDLE_MS}
accounts:
  - id: p-1
    provider: p
    api_key: env:KEY_A
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A: "sk-test-aaaaaaaaaaaa" }, fake: await startFakeUpstream() });
}, 15_000);
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
}, 15_000);

test("a text/plain 200 that sends a blank line and then nothing fails its attempt after one idle timeout, not two; the retry serves", async () => {
  gw.fake.reset();
  const reply = simpleReply("openai-chat", { text: "Second time lucky.", model: "m" }, true);
  let calls = 0;
  gw.fake.handle(() => (++calls === 1 ? { text: "\ndata: never sent\n\n", headers: { "content-type": "text/plain" }, stall_after_bytes: 1 } : reply));
  const t0 = performance.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "p/m", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  const text = await res.text();
  const took = performance.now() - t0;
  expect(res.status).toBe(200);
  expect(chatText(text)).toBe("Second time lucky.");
  expect(calls).toBe(2);
  const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
  const first = trace.attempts[0]!;
  expect(first).toMatchObject({ status: 504, error: "Upstream p went silent before answering." });
  // the first attempt lasted one idle timeout (and the sweep's granularity), not two
  expect(first.durationMs!).toBeGreaterThanOrEqual(IDLE_MS - 50);
  expect(first.durationMs!).toBeLessThan(IDLE_MS * 1.75); // ~2 idle timeouts (2013 ms seen) before the fix
  expect(took).toBeLessThan(IDLE_MS * 1.75 + 500);
}, 15_000);
