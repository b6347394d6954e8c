/**
 * The data directory's lock is one the kernel holds (flock on DATA/instance.lock, kept open for the
 * life of the instance), so it dies with the process whatever pid it had (README "Command line", review21b
 * Q2): before, the lock held a pid and a boot id, so two containers on one host sharing a data
 * directory, each running switchyard as pid 1, both started (the second read the first's "1" as its own),
 * and a lock left by a crash whose pid another program took since read as a live holder. Each test
 * runs real `switchyard start` processes; a pid the lock names that is no process here stands for
 * another container's pid.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp } from "../../src/app.ts";
import { claimDataDir, releaseDataDir } from "../../src/instance-file.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";

const YAML = (fake: string) => `
providers:
  - id: oai
    kind: openai
    base_url: "${fake}/v1"
accounts:
  - { id: oai-1, provider: oai, api_key: "env:FAKE_KEY" }
`;
const ENV = { FAKE_KEY: "fake-upstream-key-instance-lock" };
const BOOT = existsSync("/proc/sys/kernel/random/boot_id") ? `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}\n` : "";

let fake: FakeUpstream;
const started: Instance[] = [];
const dirs: string[] = [];
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(async () => {
  for (const i of started) await stopInstance(i);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await fake?.stop();
});

const scratch = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `switchyard-lock-${name}-`));
  dirs.push(d);
  return d;
};
const lockOf = (dataDir: string) => join(dataDir, "instance.lock");
/** The lock's first line: the pid of the instance that wrote it. */
const lockPid = (dataDir: string) => Number(readFileSync(lockOf(dataDir), "utf8").split("\n")[0]);
/** Starts an instance on `dataDir`; resolves with it, or with the refusal's text when it did not start. */
const tryStart = (dataDir: string) =>
  startInstance({ yaml: YAML(fake.url), env: ENV, dataDir, timeoutMs: 90_000 }).then(
    (i) => {
      started.push(i);
      return i;
    },
    (e: Error) => e.message,
  );

/** A pid no process has here (a child that has exited): another container's pid as this host sees it. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

test("a second start is refused while the first runs, also when the first's files name a pid that is no process here (another container's); the first keeps its files until its stop removes them", async () => {
  const dataDir = scratch("second");
  const first = await tryStart(dataDir);
  if (typeof first === "string") throw new Error(first);
  // As another pid namespace sees the first: its pid is no process here (two containers' pid 1 alike).
  const other = await deadPid();
  writeFileSync(lockOf(dataDir), readFileSync(lockOf(dataDir), "utf8").replace(/^\d+\n/, `${other}\n`));
  const inst = first.instance();
  writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ ...inst, pid: other }, null, 2));

  const second = await tryStart(dataDir);
  expect(typeof second).toBe("string");
  expect(second as string).toContain(`switchyard failed to start: another switchyard instance (pid ${other}, ${first.url}) is running with the data directory ${dataDir}; stop it or use --data-dir`);
  expect(second as string).not.toContain("crashed instance");
  expect((await fetch(`${first.url}/health`)).status).toBe(200);
  expect(JSON.parse(readFileSync(join(dataDir, "instance.json"), "utf8")).adminToken).toBe(inst.adminToken);
  expect(lockPid(dataDir)).toBe(other);

  first.kill("SIGTERM");
  expect(await first.exited).toBe(0);
  expect(existsSync(lockOf(dataDir))).toBe(false);
  expect(existsSync(join(dataDir, "instance.json"))).toBe(false);
}, 180_000);

test("a lock naming pid 1 of this boot that no process holds (a container's pid 1 that crashed) is taken over, with the instance.json it left", async () => {
  const dataDir = scratch("pid1");
  writeFileSync(lockOf(dataDir), `1\n${BOOT}`);
  writeFileSync(join(dataDir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:1", pid: 1, adminToken: "stale", nonce: "0".repeat(32) }));
  const inst = await tryStart(dataDir);
  if (typeof inst === "string") throw new Error(inst);
  expect(lockPid(dataDir)).toBe(inst.proc.pid);
  expect(inst.instance()).toMatchObject({ pid: inst.proc.pid, url: inst.url });
  await stopInstance(inst);
  expect(existsSync(lockOf(dataDir))).toBe(false);
}, 120_000);

test("an instance killed with SIGKILL leaves its lock file, and the next start takes it over at once, also when another program has its pid since", async () => {
  const dataDir = scratch("killed");
  const first = await tryStart(dataDir);
  if (typeof first === "string") throw new Error(first);
  first.kill("SIGKILL");
  await first.exited;
  expect(lockPid(dataDir)).toBe(first.proc.pid);
  // The pid reused by another program: this test process stands for it.
  writeFileSync(lockOf(dataDir), readFileSync(lockOf(dataDir), "utf8").replace(/^\d+\n/, `${process.pid}\n`));
  const t0 = Date.now();
  const next = await tryStart(dataDir);
  if (typeof next === "string") throw new Error(next);
  expect(lockPid(dataDir)).toBe(next.proc.pid);
  expect(next.instance()).toMatchObject({ pid: next.proc.pid, url: next.url });
  expect(Date.now() - t0).toBeLessThan(60_000);
  await stopInstance(next);
  expect(existsSync(lockOf(dataDir))).toBe(false);
}, 180_000);

test("a stop removes only the instance.json its own start wrote, not one another start of the same pid wrote since", async () => {
  // Two apps in one process stand for two instances of one pid (two containers' pid 1): the second's file stays at the first's stop.
  const dataDir = scratch("nonce");
  const opts = { host: "127.0.0.1", port: 0, dataDir, env: { HOME: dataDir }, log: () => {} };
  const a = await startApp(opts);
  const b = await startApp(opts);
  try {
    await a.shutdown(0);
    expect(JSON.parse(readFileSync(join(dataDir, "instance.json"), "utf8"))).toMatchObject({ url: b.url, pid: process.pid });
  } finally {
    await a.shutdown(0);
    await b.shutdown(0);
  }
  expect(existsSync(join(dataDir, "instance.json"))).toBe(false);
}, 60_000);

test("where flock cannot be loaded the lock file is made exclusively: a lock of this pid that this process did not claim (an earlier process of the pid) is taken over, a live other pid's refuses", async () => {
  const dataDir = scratch("fallback");
  writeFileSync(lockOf(dataDir), `${process.pid}\n${BOOT}`);
  expect(claimDataDir(dataDir, null)).toBe(true);
  expect(readFileSync(lockOf(dataDir), "utf8")).toMatch(new RegExp(`^${process.pid}\\n${BOOT.replace("\n", "\\n")}[0-9a-f]{32}\\n$`));
  expect(claimDataDir(dataDir, null)).toBe(false); // this process holds it: a second app of it
  releaseDataDir(dataDir);
  expect(existsSync(lockOf(dataDir))).toBe(false);
  const other = Bun.spawn(["sleep", "30"]);
  try {
    writeFileSync(lockOf(dataDir), `${other.pid}\n${BOOT}`);
    expect(() => claimDataDir(dataDir, null)).toThrow(`another switchyard instance (pid ${other.pid}, still starting; it holds ${lockOf(dataDir)}) is running with the data directory ${dataDir}; stop it or use --data-dir (if no switchyard runs with this directory, that lock is a crashed instance's whose pid another program now has: remove ${lockOf(dataDir)})`);
  } finally {
    other.kill("SIGKILL");
    await other.exited;
  }
  expect(claimDataDir(dataDir, null)).toBe(true); // its pid gone
  expect(lockPid(dataDir)).toBe(process.pid);
  releaseDataDir(dataDir);
  expect(existsSync(lockOf(dataDir))).toBe(false);
}, 30_000);
