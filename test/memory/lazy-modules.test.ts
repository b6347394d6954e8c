/**
 * What a plain gateway does not load (issue 17: idle memory of the compiled binary): started with an
 * API-key account, no concurrency limit and no alert webhook, it has not loaded Effect nor the price
 * table; its first priced request loads the table (and is priced), still not Effect; a limited
 * account's first slot wait and the first alert load Effect and still work. Run in a child process so
 * that no other test has loaded these modules already.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

const SCRIPT = `
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp } from ${JSON.stringify(join(ROOT, "src/app.ts"))};
import { effectIfLoaded } from ${JSON.stringify(join(ROOT, "src/memory/lazy-effect.ts"))};
import { startFakeUpstream } from ${JSON.stringify(join(ROOT, "test/support/fake-upstream.ts"))};
const priceTableLoaded = () => Object.keys(require.cache).some((k) => k.includes("genai-prices"));
const state = () => ({ effect: effectIfLoaded() !== undefined, priceTable: priceTableLoaded() });
const fake = await startFakeUpstream();
const dir = mkdtempSync(join(tmpdir(), "switchyard-lazy-"));
const config = join(dir, "config.yaml");
writeFileSync(config, \`providers:
  - { id: anth, kind: anthropic, base_url: "\${fake.url}" }
  - { id: slow, kind: anthropic, base_url: "\${fake.url}" }
accounts:
  - { id: anth-1, provider: anth, api_key: sk-test-lazy }
  - { id: slow-1, provider: slow, api_key: sk-test-lazy, max_concurrency: 1 }
\`);
const out = {};
const app = await startApp({ configPath: config, dataDir: join(dir, "data"), host: "127.0.0.1", port: 0, writeInstanceFile: false, log: () => {}, idleTrimMs: 0 });
try {
  out.started = state();
  const post = (model) => fetch(app.url + "/v1/messages", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
  const r1 = await post("anth/claude-sonnet-4-5");
  out.firstStatus = r1.status;
  await r1.text();
  await Bun.sleep(50);
  out.afterPricedRequest = state();
  out.cost = (await app.store.recentCalls(5)).find((c) => c.model === "claude-sonnet-4-5")?.costUsd;
  const r2 = await post("slow/claude-sonnet-4-5");
  out.limitedStatus = r2.status;
  await r2.text();
  out.afterLimitedAccount = state();
} finally {
  await app.shutdown(0);
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
`;

test("a plain gateway loads the price table on its first priced request and Effect only for a limited account", () => {
  const r = Bun.spawnSync([process.execPath, "-e", SCRIPT], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, SWITCHYARD_HOME: "/nonexistent-switchyard-home" } });
  const text = r.stdout.toString();
  expect({ exitCode: r.exitCode, stderr: r.exitCode === 0 ? "" : r.stderr.toString() }).toEqual({ exitCode: 0, stderr: "" });
  const out = JSON.parse(text.trim().split("\n").at(-1)!);
  expect(out).toEqual({
    started: { effect: false, priceTable: false },
    firstStatus: 200,
    afterPricedRequest: { effect: false, priceTable: true },
    // claude-sonnet-4-5 at $3 in and $15 out per million; the fake upstream reports 11 in, 7 out.
    cost: expect.closeTo((11 * 3 + 7 * 15) / 1e6, 12),
    limitedStatus: 200,
    afterLimitedAccount: { effect: true, priceTable: true },
  });
});
