/**
 * src/shared-config.ts watchSharedConfig with a plain fake store: a reload's check compares the
 * configuration the reload applied, even when a check of the earlier one (a timer's, slowed by the
 * secrets' scrypt fingerprints on a busy machine) is still running (the flake of
 * test/e2e/multi-instance-secret-fingerprint.test.ts under load 20, 2026-12-05: the reload's answer
 * named no difference).
 */
import { expect, test } from "bun:test";
import type { RuntimeConfig } from "../../src/config/types.ts";
import { watchSharedConfig } from "../../src/shared-config.ts";
import type { InstanceConfig } from "../../src/store/shared.ts";

/** The parts of a RuntimeConfig the shared comparison reads: one account's max_concurrency. */
const configWith = (maxConcurrency: number) =>
  ({ keys: [], settings: { pricing: new Map(), alerts: { quotaThresholds: [80] } }, accounts: [{ id: "a1", maxConcurrency }] }) as unknown as RuntimeConfig;

test("a reload's check is not answered by a check of the configuration before it still running: it runs after it and names the difference", async () => {
  let cfg = configWith(2);
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((r) => (releaseFirst = r));
  const published: string[] = [];
  const other: InstanceConfig = { instanceId: "b", label: "http://b", parts: { "accounts.a1.max_concurrency": "2", "settings.pricing": "{}", "settings.alerts.quota_thresholds": "[80]" }, updatedAt: 0, saltedPerDatabase: true };
  const store = {
    instanceConfigSalt: async () => "salt",
    publishInstanceConfig: async (_label: string, parts: Record<string, string>) => {
      published.push(parts["accounts.a1.max_concurrency"]!);
      if (published.length === 1) await firstHeld; // the check of the configuration before the reload is slow
    },
    otherInstanceConfigs: async () => [other],
  };
  const watch = watchSharedConfig(store, () => cfg, "http://a", () => {}, () => 0, 60_000)!;
  try {
    const before = watch.check("start");
    await Bun.sleep(5);
    cfg = configWith(4); // the reload applies a new file meanwhile
    const reload = watch.check("reload");
    releaseFirst();
    expect(await before).toEqual([]);
    expect(await reload).toEqual([{ path: "accounts.a1.max_concurrency", other: "http://b", here: "4", there: "2" }]);
    expect(published).toEqual(["2", "4"]);
    // a second call for the same configuration while one runs joins it (one check, one publish)
    const [x, y] = await Promise.all([watch.check("reload"), watch.check("reload")]);
    expect(x).toBe(y);
    expect(published).toEqual(["2", "4", "4"]);
  } finally {
    watch.stop();
  }
});
