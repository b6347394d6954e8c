/**
 * Nested combos that reach one model on one account twice (a power user's `chain` of `tools-only` and
 * `main`, both ending at `local/qwen3-coder` on `local-1`): after that target's 400 the same body went
 * to the same account again. Now the plan keeps it once, at its first position, and the dry run says
 * which was left out and why; the gateway's start warns about the combo.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fakeProviders } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const YAML = `${fakeProviders([
  ["local", "openai-compatible"],
  ["q", "openai-compatible"],
])}
combos:
  - name: tools-only
    targets:
      - model: q/tools-model
      - { model: local/qwen3-coder, account: local-1 }
  - name: main
    targets:
      - { model: local/qwen3-coder, account: local-1 }
      - model: q/main-model
  - name: chain
    targets:
      - model: tools-only
      - model: main
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

test("after a 400 of local/qwen3-coder @ local-1 the request goes on to the next other target, not to local-1 again; each target once", async () => {
  gw.fake.handle(() => ({ status: 400, json: { error: { message: "bad request for this model", type: "invalid_request_error", param: null, code: null } } }));
  try {
    const before = gw.fake.requests.length;
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "chain", messages: [{ role: "user", content: "hi" }] }) });
    await r.arrayBuffer();
    expect(r.status).toBe(400);
    expect(gw.fake.requests.slice(before).map((x) => x.model)).toEqual(["tools-model", "qwen3-coder", "main-model"]);
  } finally {
    gw.fake.handle(undefined);
  }
});

test("the dry run plans it once and says which repeat it left out; the start's warnings name the combo", async () => {
  const r = await fetch(`${gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "chain", request: { messages: [{ role: "user", content: "hi" }] } }) });
  const plan = (await r.json()) as { targets: Array<{ target: string }>; decisions: Array<{ subject: string; verdict: string; reason: string }>; attempts: Array<{ target: string; accountId: string }> };
  expect(plan.targets.map((t) => t.target)).toEqual(["q/tools-model", "local/qwen3-coder @ local-1", "q/main-model"]);
  expect(plan.attempts.map((a) => `${a.target} @ ${a.accountId}`)).toEqual(["q/tools-model @ q-1", "local/qwen3-coder @ local-1", "q/main-model @ q-1"]);
  expect(plan.decisions).toContainEqual({ subject: "local/qwen3-coder @ local-1", verdict: "out", reason: "repeats local/qwen3-coder @ local-1 ahead of it: the same model on the same account is tried once, at its first position" });
  const warned = gw.logs.map((l) => JSON.parse(l) as { path?: string; warning?: string }).filter((l) => l.path === "combos[2].targets[1]");
  expect(warned.map((l) => l.warning)).toEqual(['combo "chain" reaches local/qwen3-coder @ local-1 again (first through targets[0]): a request tries it once, at its first position']);
});
