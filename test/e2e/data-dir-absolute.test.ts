/**
 * A data directory given relative (`--data-dir ../data`, the SRE tryout of 2026-12-07) is named
 * absolute in the `switchyard listening` line and in `switchyard stop`'s line: a log or a terminal read
 * later, from elsewhere, cannot tell which directory `../data` was (until then both said it as given).
 */
import { afterAll, expect, test } from "bun:test";
import { realpathSync, rmSync } from "node:fs";
import { providersAtFake } from "../support/configs.ts";
import { SOURCE_CLI, startInstance, type Instance } from "../support/instance.ts";

let inst: Instance | undefined;
afterAll(async () => {
  inst?.kill("SIGKILL");
  if (inst) rmSync(inst.dataDir, { recursive: true, force: true });
});

test("`--data-dir .` (relative): the listening line and stop's line name the directory absolute", async () => {
  inst = await startInstance({ yaml: providersAtFake(["oai", "openai"]).replaceAll("{{FAKE}}", "http://127.0.0.1:9"), args: ["--data-dir", "."], timeoutMs: 60_000 });
  const dir = realpathSync(inst.dataDir);
  const listening = inst.stderr.map((l) => (l.startsWith("{") ? JSON.parse(l) : {})).find((j) => j.msg === "switchyard listening");
  expect(realpathSync(listening.dataDir)).toBe(dir);
  expect(listening.dataDir).toStartWith("/");
  const stop = Bun.spawnSync([...SOURCE_CLI, "stop", "--data-dir", "."], { cwd: inst.dataDir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: inst.dataDir }, timeout: 60_000 });
  const said = stop.stdout.toString();
  expect(stop.exitCode).toBe(0);
  expect(said).toMatch(/data directory \/[^)]*\)/);
  expect(said).not.toContain("data directory .)");
  expect(await inst.exited).toBe(0);
}, 90_000);
