/**
 * The dry run (`POST /admin/api/dry-run`, `switchyard route`) of a least-used combo (SPEC 5.1: fewest
 * lifetime requests first) orders as a real request does: it waits, as the request does, for the read
 * of the lifetime counts (the usage rows per served provider/model) at most 1 s. It did not wait: the
 * dry run that started the read (the first least-used plan after a reload added the combo, or one right
 * after a restart while the read was under way) was ordered by this process's counts alone (all zero),
 * so it named the combo's first target while the request went to the other one.
 */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { SPREAD_ENV as env, spreadConfig as yaml } from "../support/configs.ts";
import { gatewayRestarts, postHi, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type ReceivedRequest } from "../support/fake-upstream.ts";

/** The test's gateways, restarted on one data directory beside one fake upstream. */
const gws = gatewayRestarts();
afterAll(() => gws.stop());
let gw: TestGateway | undefined;

const body = { model: "spread", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };
const post = (model: string) => postHi(gw!.url, model);
const admin = (path: string, json?: unknown) =>
  fetch(`${gw!.url}/admin/api${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw!.app.adminToken}`, "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
  });

test("the first dry run of a least-used combo added by a reload after a restart orders by the lifetime counts, as the request then goes", async () => {
  const fake = await gws.upstream();
  fake.handle((r: ReceivedRequest) => simpleReply(r.format!, { text: "ok", model: r.model }, r.stream));
  gw = await gws.start(yaml("fallback"), { env });
  // p/claude-x serves three requests; the usage rows are written at the stop.
  for (let i = 0; i < 3; i++) expect((await post("p/claude-x")).status).toBe(200);
  await gw.stopGatewayOnly();
  // Restarted without a least-used combo (no read of the counts at start), then a reload makes `spread` least-used.
  gw = await gws.start(yaml("fallback"), { env });
  writeFileSync(gw.configPath, yaml("least-used").replaceAll("{{FAKE}}", fake.url));
  const reloaded = await admin("/config/reload");
  expect(reloaded.status).toBe(200);
  await reloaded.arrayBuffer();

  const dry = await admin("/dry-run", { request: body, format: "anthropic-messages" });
  expect(dry.status).toBe(200);
  const plan = (await dry.json()) as { targets: Array<{ target: string }>; attempts: Array<{ target: string; accountId: string }> };
  // Lifetime counts p 3, q 0: q first (the written order, and zero counts, would put p first).
  expect(plan.targets.map((t) => t.target)).toEqual(["q/claude-x", "p/claude-x"]);
  expect(plan.attempts.map((a) => `${a.target} @ ${a.accountId}`)).toEqual(["q/claude-x @ b", "p/claude-x @ a"]);

  // The request goes where the dry run said.
  const res = await post("spread");
  expect(res.status).toBe(200);
  expect(fake.requests.at(-1)!.path.split("/")[1]).toBe("q");
});
