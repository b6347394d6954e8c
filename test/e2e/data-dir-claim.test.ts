/**
 * One instance per data directory (SPEC 2.2, README "One instance per port and per data directory"), also
 * for two starts at the same moment (try22 P1): the check read instance.json, written only once the
 * instance listened, so two starts within those seconds both ran, the second's instance.json replaced the
 * first's, and stopping the second removed it while the first still ran ("no running switchyard instance
 * found"). The start now claims the directory first with a lock the kernel holds (flock on instance.lock,
 * which names the pid); a lock or instance.json left by a dead process does not block a start
 * (test/e2e/instance-lock.test.ts: pid 1, another container's pid, kill -9).
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startApp } from "../../src/app.ts";
import { claimDataDir, releaseDataDir } from "../../src/instance-file.ts";
import { dataDirInstances, deadPid, lockPid } from "../support/data-dir-instances.ts";
import { stopInstance, type Instance } from "../support/instance.ts";

const instances = dataDirInstances("fake-upstream-key-data-dir-claim");

test("two starts on one data directory at the same moment: exactly one runs, the other exits 1 naming the directory and the running one's pid; its stop removes instance.json and the lock", async () => {
  const dataDir = instances.scratch("claim");
  const both = await Promise.allSettled([0, 1].map(() => instances.start(dataDir)));
  const ran = both.filter((r): r is PromiseFulfilledResult<Instance> => r.status === "fulfilled").map((r) => r.value);
  const refused = both.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => String(r.reason?.message ?? r.reason));
  expect(ran).toHaveLength(1);
  expect(refused).toHaveLength(1);
  const [first] = ran;
  const pid = first!.proc.pid;
  expect(refused[0]).toContain("switchyard did not start (exit 1)");
  expect(refused[0]).toContain(`switchyard failed to start: another switchyard instance (pid ${pid}, `);
  expect(refused[0]).toContain(`is running with the data directory ${dataDir}; stop it or use --data-dir`);
  expect(first!.instance()).toMatchObject({ pid, url: first!.url });
  expect(lockPid(dataDir)).toBe(pid);
  expect((await fetch(`${first!.url}/health`)).status).toBe(200);

  first!.kill("SIGTERM");
  expect(await first!.exited).toBe(0);
  expect(existsSync(join(dataDir, "instance.json"))).toBe(false);
  expect(existsSync(join(dataDir, "instance.lock"))).toBe(false);
}, 180_000);

test("an instance.json and an instance.lock left by a dead process do not block a start; the new instance takes both over", async () => {
  const dataDir = instances.scratch("claim-stale");
  const dead = await deadPid();
  writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:1", pid: dead, adminToken: "stale" }));
  writeFileSync(join(dataDir, "instance.lock"), `${dead}\n`);
  const inst = await instances.start(dataDir);
  expect(inst.instance()).toMatchObject({ pid: inst.proc.pid, url: inst.url });
  expect(lockPid(dataDir)).toBe(inst.proc.pid);
  await stopInstance(inst);
  expect(existsSync(join(dataDir, "instance.lock"))).toBe(false);
}, 120_000);

test("a start while another holds the lock and has not written instance.json yet is refused as still starting", async () => {
  // this test process stands for an instance between its claim and its listening: it holds the lock
  const dataDir = instances.scratch("claim-starting");
  expect(claimDataDir(dataDir)).toEqual({ claimed: true, warnings: [] });
  const held = readFileSync(join(dataDir, "instance.lock"), "utf8");
  try {
    const err = await instances.start(dataDir).then(
      () => "",
      (e: Error) => e.message,
    );
    expect(err).toContain(`switchyard failed to start: another switchyard instance (pid ${process.pid}, still starting; it holds ${join(dataDir, "instance.lock")}) is running with the data directory ${dataDir}; stop it or use --data-dir`);
    // the kernel's lock says its holder lives: no "remove it if it is a crash's" (a pid alone could not tell)
    expect(err).not.toContain("crashed instance");
    expect(readFileSync(join(dataDir, "instance.lock"), "utf8")).toBe(held);
  } finally {
    releaseDataDir(dataDir);
  }
  expect(existsSync(join(dataDir, "instance.lock"))).toBe(false);
}, 120_000);

test.skipIf(!existsSync("/proc/sys/kernel/random/boot_id"))("a lock and instance.json written before the machine's last boot do not block a start, though their pid is a live process's now", async () => {
  // after a reboot the pid they name may be another program's: this test process stands for it
  const dataDir = instances.scratch("claim-boot");
  writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:1", pid: process.pid, adminToken: "stale" }));
  writeFileSync(join(dataDir, "instance.lock"), `${process.pid}\n00000000-0000-4000-8000-000000000000\n`);
  const inst = await instances.start(dataDir);
  expect(inst.instance()).toMatchObject({ pid: inst.proc.pid, url: inst.url });
  expect(readFileSync(join(dataDir, "instance.lock"), "utf8")).toMatch(new RegExp(`^${inst.proc.pid}\\n${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}\\n[0-9a-f]{32}\\n$`));
  await stopInstance(inst);
  expect(existsSync(join(dataDir, "instance.lock"))).toBe(false);
}, 120_000);

test("a start that fails after its claim (the port is taken) gives the data directory back: no instance.lock is left", async () => {
  const dataDir = instances.scratch("claim-failed");
  const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
  try {
    const err = await startApp({ host: "127.0.0.1", port: holder.port, dataDir, env: { HOME: dataDir }, log: () => {} }).then(
      async (app) => {
        await app.shutdown(0);
        return "";
      },
      (e: Error) => e.message,
    );
    expect(err).toContain("Failed to start server");
    expect(existsSync(join(dataDir, "instance.lock"))).toBe(false);
  } finally {
    holder.stop(true);
  }
}, 60_000);
