/**
 * The dry run (`switchyard route MODEL`, `POST /admin/api/dry-run`, SPEC 2.2, 9.3) of a target whose
 * model every account has had removed (SPEC 6.3: the upstream answered 404 model not found): a real
 * request tries the model's siblings next (R-10, pipeline/attempt-loop.ts), so the dry run lists them
 * there, and its attempt order is the one the real request takes. Before, the dry run showed the
 * target as out and went on to the combo's next target, which the real request reached only after the
 * siblings.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RoutePlan } from "../../pipeline/index.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, type FakeReply } from "../support/fake-upstream.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"], ["q", "openai-compatible"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
combos:
  - name: missing-then-q
    targets:
      - model: p/claude-opus-4-1-20250805
      - model: q/glm-x
  - name: unknown-then-q
    targets:
      - model: p/llama-unknown
      - model: q/glm-x
`;
const ENV = { KEY_A1: "sk-test-route-siblings-a1" };
/** Models the fake answers 404 model not found for. */
const MISSING = new Set(["claude-opus-4-1-20250805", "llama-unknown"]);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
  gw.fake.handle((r): FakeReply => {
    if (MISSING.has(r.model ?? "")) return { status: 404, json: { type: "error", error: { type: "not_found_error", message: `model: ${r.model}` } } };
    return simpleReply(r.format!, { text: "ok", model: r.model }, r.stream);
  });
});
afterAll(async () => {
  await gw?.stop();
});

/** One Messages request for `model`: the models the upstream was asked for, in order. */
async function upstreamModels(model: string): Promise<string[]> {
  const before = gw.fake.requests.length;
  const res = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return gw.fake.requests.slice(before).map((r) => r.model ?? "?");
}

async function dryRun(model: string): Promise<RoutePlan> {
  const res = await fetch(`${gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: { model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] } }) });
  expect(res.status).toBe(200);
  return (await res.json()) as RoutePlan;
}

/** Runs the CLI from source against the gateway (not spawnSync: the gateway answers from this process). */
async function cli(args: string[]) {
  const r = Bun.spawn([...SOURCE_CLI, ...args, "--url", gw.url], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(r.stdout).text(), new Response(r.stderr).text(), r.exited]);
  return { code, out: out.trim(), err: err.trim() };
}

describe("the dry run of a target whose model was removed from every account", () => {
  test("lists the model's siblings after it, and its attempt order is the real request's", async () => {
    // The first request meets the 404: the pairing is removed, the undated sibling serves.
    expect(await upstreamModels("missing-then-q")).toEqual(["claude-opus-4-1-20250805", "claude-opus-4-1"]);
    const status = (await (await fetch(`${gw.url}/admin/api/accounts`)).json()) as { accounts: Array<{ id: string; removedModels: Array<{ model: string }> }> };
    expect(status.accounts.find((a) => a.id === "a1")!.removedModels.map((r) => r.model)).toEqual(["claude-opus-4-1-20250805"]);

    const plan = await dryRun("missing-then-q");
    expect(plan.targets.map((t) => [t.target, t.verdict, t.siblingOf])).toEqual([
      ["p/claude-opus-4-1-20250805", "out", undefined],
      ["p/claude-opus-4-1", "in", "claude-opus-4-1-20250805"],
      ["p/claude-opus-4-2", "in", "claude-opus-4-1-20250805"],
      ["p/claude-opus-4", "in", "claude-opus-4-1-20250805"],
      ["q/glm-x", "in", undefined],
    ]);
    expect(plan.targets[0].reason).toBe(
      "the upstream said claude-opus-4-1-20250805 does not exist for every account of p (removed pairing, 404 model_not_found); its siblings come next: claude-opus-4-1, claude-opus-4-2, claude-opus-4",
    );
    expect(plan.targets[0].accounts).toEqual([expect.objectContaining({ accountId: "a1", verdict: "out" })]);
    expect(plan.targets[1].reason).toBe("sibling of claude-opus-4-1-20250805");
    expect(plan.decisions).toContainEqual({ subject: "p/claude-opus-4-1", verdict: "in", reason: "sibling of claude-opus-4-1-20250805: the upstream said claude-opus-4-1-20250805 does not exist" });
    // Which target and account each attempt is (a non-streamed request's are also marked notReachedIf: header-timeout-fallback.test.ts).
    const order = plan.attempts.map((a: { target: string; accountId: string }) => ({ target: a.target, accountId: a.accountId }));
    expect(order.slice(0, 2)).toEqual([
      { target: "p/claude-opus-4-1", accountId: "a1" },
      { target: "p/claude-opus-4-2", accountId: "a1" },
    ]);
    expect(order.at(-1)).toEqual({ target: "q/glm-x", accountId: "q-keyless" });

    // The real request does what the dry run says: the sibling first, the missing model not asked again.
    expect(await upstreamModels("missing-then-q")).toEqual(["claude-opus-4-1"]);

    const r = await cli(["route", "missing-then-q"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("  1. p/claude-opus-4-1-20250805  out: the upstream said claude-opus-4-1-20250805 does not exist for every account of p");
    expect(r.out).toContain("  2. p/claude-opus-4-1  in: sibling of claude-opus-4-1-20250805");
    expect(r.out).toContain("attempt order: p/claude-opus-4-1 @ a1 → p/claude-opus-4-2 @ a1 → p/claude-opus-4 @ a1 → q/glm-x @ q-keyless");
  });

  test("a removed model without siblings: the dry run says so and goes on to the next target, as the request does", async () => {
    expect(await upstreamModels("unknown-then-q")).toEqual(["llama-unknown", "glm-x"]);
    const plan = await dryRun("unknown-then-q");
    expect(plan.targets.map((t) => [t.target, t.verdict])).toEqual([
      ["p/llama-unknown", "out"],
      ["q/glm-x", "in"],
    ]);
    expect(plan.targets[0].reason).toBe("the upstream said llama-unknown does not exist for every account of p (removed pairing, 404 model_not_found); no sibling known");
    expect(plan.attempts).toEqual([{ target: "q/glm-x", accountId: "q-keyless" }]);
    expect(await upstreamModels("unknown-then-q")).toEqual(["glm-x"]);
  });
});
