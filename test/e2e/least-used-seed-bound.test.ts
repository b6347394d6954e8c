/**
 * least-used's lifetime counts (SPEC 5.1) after a restart hold the provider/model pairs of the
 * least-used combos' targets only, not every pair the store's usage rows name: an OpenAI-compatible or
 * Anthropic-compatible provider serves whatever model name a client sends, so those pairs grew with
 * client-chosen names, held for the process's life (fixed 2026-12-07; before, the read at start summed
 * and kept every pair). A combo a reload makes least-used has its targets' counts read at its first
 * request, and is ordered by them.
 */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { SPREAD_ENV as env, spreadConfig } from "../support/configs.ts";
import { gatewayRestarts, postHi, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type FakeUpstream, type ReceivedRequest } from "../support/fake-upstream.ts";

/** spread (least-used) and `other`: p/claude-y then p/claude-x, with `otherStrategy`. */
const yaml = (otherStrategy: string) =>
  spreadConfig(
    "least-used",
    `  - name: other
    strategy: ${otherStrategy}
    targets:
      - model: p/claude-y
      - model: p/claude-x
`,
  );

/** The test's gateways, restarted on one data directory beside one fake upstream. */
const gws = gatewayRestarts();
afterAll(() => gws.stop());
let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;

const post = (model: string) => postHi(gw!.url, model);
const modelCalled = () => `${fake!.requests.at(-1)!.path.split("/")[1]}/${fake!.requests.at(-1)!.model}`;
/** The pairs the order stage holds lifetime counts for (its seed), with their counts. */
const seeded = () => Object.fromEntries((gw!.app.order as unknown as { seed: { byModel: Map<string, number> } }).seed.byModel);

test("after a restart the least-used counts held are the least-used targets' pairs, not every client-chosen name served; a reload's new least-used combo reads its own", async () => {
  fake = await gws.upstream();
  fake.handle((r: ReceivedRequest) => simpleReply(r.format!, { text: "ok", model: r.model }, r.stream));
  gw = await gws.start(yaml("fallback"), { env });
  // named directly (no least-used count of this process moves): p/claude-x 3, p/claude-y 5, and 40 names a client made up
  for (let i = 0; i < 3; i++) expect((await post("p/claude-x")).status).toBe(200);
  for (let i = 0; i < 5; i++) expect((await post("p/claude-y")).status).toBe(200);
  for (let i = 0; i < 40; i++) expect((await post(`p/made-up-${i}`)).status).toBe(200);
  await gw.stopGatewayOnly(); // the usage rows are written at the stop

  gw = await gws.start(yaml("fallback"), { env });
  expect((await post("spread")).status).toBe(200);
  expect(modelCalled()).toBe("q/claude-x"); // lifetime counts p 3, q 0
  expect(seeded()).toEqual({ "p/claude-x": 3 }); // q/claude-x has no rows; no made-up name, no p/claude-y

  // a reload makes `other` least-used: its first request reads p/claude-y's count and is ordered by it
  writeFileSync(gw.configPath, yaml("least-used").replaceAll("{{FAKE}}", fake.url));
  const reloaded = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${gw.app.adminToken}` } });
  expect(reloaded.status).toBe(200);
  await reloaded.arrayBuffer();
  expect((await post("other")).status).toBe(200);
  expect(modelCalled()).toBe("p/claude-x"); // p/claude-x 3 against p/claude-y 5 (written order, or y unread at 0, would try y first)
  expect(seeded()).toEqual({ "p/claude-x": 3, "p/claude-y": 5 });
});
