/**
 * least-used (SPEC 5.1: fewest lifetime requests first) across a restart on the same data directory.
 * The lifetime counts (the usage rows per served provider/model) were read at the first least-used
 * request and not awaited, so that request was ordered by this process's counts alone (all zero): it went
 * to the combo's first target however many requests that target had served before the restart.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeUpstream, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
providers:
  - id: p
    kind: anthropic
    base_url: "{{FAKE}}/p"
  - id: q
    kind: anthropic
    base_url: "{{FAKE}}/q"
accounts:
  - { id: a, provider: p, api_key: env:KEY_A }
  - { id: b, provider: q, api_key: env:KEY_B }
combos:
  - name: spread
    strategy: least-used
    targets:
      - model: p/claude-x
      - model: q/claude-x
`;
const env = { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb" };

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
let dataDir: string | undefined;
afterAll(async () => {
  await gw?.stopGatewayOnly();
  await fake?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const post = (url: string, model: string) =>
  fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
const providerCalled = () => gw!.fake.requests.at(-1)!.path.split("/")[1];

test("after a restart the first least-used request goes to the target with the fewest lifetime requests", async () => {
  fake = await startFakeUpstream();
  fake.handle((r: ReceivedRequest) => simpleReply(r.format!, { text: "ok", model: r.model }, r.stream));
  gw = await startGateway(YAML, { env, fake });
  dataDir = gw.dataDir;
  // p/claude-x serves three requests (named directly: no least-used count of this process moves).
  for (let i = 0; i < 3; i++) expect((await post(gw.url, "p/claude-x")).status).toBe(200);
  await gw.stopGatewayOnly(); // the usage rows are written at the stop
  gw = await startGateway(YAML, { env, fake, dataDir });
  const res = await post(gw.url, "spread");
  expect(res.status).toBe(200);
  // Lifetime counts p 3, q 0: q first (written order would put p first).
  expect(providerCalled()).toBe("q");
  expect((await post(gw.url, "spread")).status).toBe(200);
  expect(providerCalled()).toBe("q"); // q 2 against p 3
});
