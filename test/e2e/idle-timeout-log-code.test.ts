/**
 * A stream whose upstream falls silent after its first content is closed by the provider's idle timeout
 * (SPEC 6.4) with the in-band error `upstream_idle_timeout`. Its request log line said outcome
 * "upstream_error", status 200 and no `code` (the SRE tryout of 2026-12-07; the OpenTelemetry span had
 * error.type upstream_idle_timeout): the line now carries that code too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { simpleReply, startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { until } from "../support/until.ts";

const YAML = `
${providersAtFake(["oai", "openai"])}
    idle_timeout_ms: 400
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

test("a stream cut by the upstream idle timeout: its log line has code upstream_idle_timeout", async () => {
  const sse = simpleReply("openai-chat", { text: "first words and then silence", model: "fake-model" }, true).sse!;
  // the role and the first text delta, then nothing: committed, then idle
  const second = sse.indexOf("data: ", sse.indexOf("first") + 1);
  gw.fake.enqueue({ sse, stall_after_bytes: second });
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/fake-model", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toContain("upstream_idle_timeout");
  let line: Record<string, unknown> | undefined;
  await until(() => (line = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((j) => j.msg === "request")) !== undefined, 5_000, "the request's log line");
  expect(line).toMatchObject({ outcome: "upstream_error", status: 200, code: "upstream_idle_timeout" });
}, 30_000);
