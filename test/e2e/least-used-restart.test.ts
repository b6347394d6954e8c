/**
 * least-used (SPEC 5.1: fewest lifetime requests first) across a restart on the same data directory.
 * The lifetime counts (the usage rows per served provider/model) were read at the first least-used
 * request and not awaited, so that request was ordered by this process's counts alone (all zero): it went
 * to the combo's first target however many requests that target had served before the restart.
 */
import { afterAll, expect, test } from "bun:test";
import { SPREAD_ENV as env, spreadConfig } from "../support/configs.ts";
import { gatewayRestarts, postHi, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = spreadConfig("least-used");

/** The test's gateways, restarted on one data directory beside one fake upstream. */
const gws = gatewayRestarts();
afterAll(() => gws.stop());
let gw: TestGateway | undefined;

const post = postHi;
const providerCalled = () => gw!.fake.requests.at(-1)!.path.split("/")[1];

test("after a restart the first least-used request goes to the target with the fewest lifetime requests", async () => {
  const fake = await gws.upstream();
  fake.handle((r: ReceivedRequest) => simpleReply(r.format!, { text: "ok", model: r.model }, r.stream));
  gw = await gws.start(YAML, { env });
  // p/claude-x serves three requests (named directly: no least-used count of this process moves).
  for (let i = 0; i < 3; i++) expect((await post(gw.url, "p/claude-x")).status).toBe(200);
  await gw.stopGatewayOnly(); // the usage rows are written at the stop
  gw = await gws.start(YAML, { env });
  const res = await post(gw.url, "spread");
  expect(res.status).toBe(200);
  // Lifetime counts p 3, q 0: q first (written order would put p first).
  expect(providerCalled()).toBe("q");
  expect((await post(gw.url, "spread")).status).toBe(200);
  expect(providerCalled()).toBe("q"); // q 2 against p 3
});
