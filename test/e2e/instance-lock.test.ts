/**
 * The data directory's lock is one the kernel holds (flock on DATA/instance.lock, kept open for the
 * life of the instance), so it dies with the process whatever pid it had (README "Command line", review21b
 * Q2): before, the lock held a pid and a boot id, so two containers on one host sharing a data
 * directory, each running switchyard as pid 1, both started (the second read the first's "1" as its own),
 * and a lock left by a crash whose pid another program took since read as a live holder. Each test
 * runs real `switchyard start` processes, or claims in this process; a pid the lock names that is no
 * process here stands for another container's pid. Also: a file system without locks (flock failing
 * with EOPNOTSUPP, ENOLCK, ENOSYS: the exclusive file and a warning, not a refusal), a lock file that
 * cannot be written once locked (closed, not held on), and an earlier version's lock (pid only, no
 * nonce) whose instance still runs (refused with a hint, not taken over).
 */
import { expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, ftruncateSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { startApp } from "../../src/app.ts";
import { claimDataDir, releaseDataDir, type LockFileWrites } from "../../src/instance-file.ts";
import { FlockError, kernelLock, NO_LOCKS_ERRNO, type KernelLock } from "../../src/kernel-lock.ts";
import { dataDirInstances, deadPid, lockPid } from "../support/data-dir-instances.ts";
import { stopInstance } from "../support/instance.ts";

const BOOT = existsSync("/proc/sys/kernel/random/boot_id") ? `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()}\n` : "";
const instances = dataDirInstances("fake-upstream-key-instance-lock");
const scratch = (name: string) => instances.scratch(`lock-${name}`);
const lockOf = (dataDir: string) => join(dataDir, "instance.lock");
/** Starts an instance on `dataDir`; resolves with it, or with the refusal's text when it did not start. */
const tryStart = (dataDir: string) => instances.start(dataDir).catch((e: Error) => e.message);

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
  writeFileSync(lockOf(dataDir), `1\n${BOOT}${"a".repeat(32)}\n`); // with its nonce: one of this version (an earlier one's, see below)
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
  expect(claimDataDir(dataDir, null).claimed).toBe(true);
  expect(readFileSync(lockOf(dataDir), "utf8")).toMatch(new RegExp(`^${process.pid}\\n${BOOT.replace("\n", "\\n")}[0-9a-f]{32}\\n$`));
  expect(claimDataDir(dataDir, null).claimed).toBe(false); // this process holds it: a second app of it
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
  expect(claimDataDir(dataDir, null).claimed).toBe(true); // its pid gone
  expect(lockPid(dataDir)).toBe(process.pid);
  releaseDataDir(dataDir);
  expect(existsSync(lockOf(dataDir))).toBe(false);
}, 30_000);

/** A kernel lock whose flock fails with `errno`, as on a file system without locks (NFS without its lock daemon). */
const failingLock = (errno: number): KernelLock => ({
  tryExclusive() {
    throw new FlockError(errno);
  },
});

test("where flock fails saying the file system has no locks (EOPNOTSUPP, ENOLCK, ENOSYS) the start claims the directory with the lock file created exclusively and logs one warning, instead of refusing", async () => {
  const dataDir = scratch("nolocks");
  const lines: string[] = [];
  const app = await startApp({ host: "127.0.0.1", port: 0, dataDir, env: { HOME: dataDir }, log: (l) => lines.push(l), kernelLock: failingLock(NO_LOCKS_ERRNO.EOPNOTSUPP) });
  try {
    expect((await fetch(`${app.url}/health`)).status).toBe(200);
    const warns = lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === "warn" && l.msg.includes("flock"));
    expect(warns).toEqual([expect.objectContaining({ msg: expect.stringContaining(`cannot lock ${lockOf(dataDir)} with flock(2) (flock failed (errno ${NO_LOCKS_ERRNO.EOPNOTSUPP} EOPNOTSUPP)): its file system has no locks; the data directory is claimed with that file created exclusively instead`) })]);
    expect(readFileSync(lockOf(dataDir), "utf8")).toMatch(new RegExp(`^${process.pid}\\n${BOOT.replace("\n", "\\n")}[0-9a-f]{32}\\n$`));
  } finally {
    await app.shutdown(0);
  }
  expect(existsSync(lockOf(dataDir))).toBe(false);

  // a lock file there already: the fallback's rules, a live other pid refuses, a gone one is taken over
  const other = Bun.spawn(["sleep", "30"]);
  try {
    writeFileSync(lockOf(dataDir), `${other.pid}\n${BOOT}`);
    expect(() => claimDataDir(dataDir, failingLock(NO_LOCKS_ERRNO.ENOLCK))).toThrow(`another switchyard instance (pid ${other.pid}, still starting; it holds ${lockOf(dataDir)}) is running with the data directory ${dataDir}; stop it or use --data-dir (if no switchyard runs`);
  } finally {
    other.kill("SIGKILL");
    await other.exited;
  }
  const taken = claimDataDir(dataDir, failingLock(NO_LOCKS_ERRNO.ENOSYS));
  expect(taken.claimed).toBe(true);
  expect(taken.warnings).toEqual([expect.stringContaining(`(flock failed (errno ${NO_LOCKS_ERRNO.ENOSYS} ENOSYS))`)]);
  expect(lockPid(dataDir)).toBe(process.pid);
  releaseDataDir(dataDir);
  expect(existsSync(lockOf(dataDir))).toBe(false);
  // flock failing otherwise (EIO) still refuses
  expect(() => claimDataDir(dataDir, failingLock(5))).toThrow(`cannot lock ${lockOf(dataDir)}: flock failed (errno 5); the file system of the data directory must support flock(2)`);
}, 60_000);

test("a lock file that cannot be written once locked (disk full) fails the claim and is not left locked: the next claim of this process gets it", () => {
  const dataDir = scratch("writefails");
  const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  const full: LockFileWrites = { ftruncate: () => {}, write: () => { throw enospc; }, fchmod: () => {} };
  expect(() => claimDataDir(dataDir, kernelLock() ?? null, full)).toThrow("ENOSPC");
  const next = claimDataDir(dataDir); // before: "another switchyard instance (pid <this one>, …)", its own failed claim's lock
  expect(next.claimed).toBe(true);
  expect(lockPid(dataDir)).toBe(process.pid);
  releaseDataDir(dataDir);
  expect(existsSync(lockOf(dataDir))).toBe(false);
});

test.skipIf(process.getuid?.() !== 0)("a stale lock file of another user whose mode cannot be narrowed (EPERM) is taken over with a warning naming its owner, not a bare EPERM", () => {
  const dataDir = scratch("otheruser");
  writeFileSync(lockOf(dataDir), "999999\n", { mode: 0o644 });
  chmodSync(lockOf(dataDir), 0o644);
  chownSync(lockOf(dataDir), 65534, 65534); // root can narrow any file's mode: its EPERM is injected below, as a non-root user gets it
  const eperm = Object.assign(new Error("EPERM: operation not permitted, fchmod"), { code: "EPERM" });
  const c = claimDataDir(dataDir, kernelLock() ?? null, { ftruncate: (fd, n) => ftruncateSync(fd, n), write: (fd, t) => void writeSync(fd, t, 0), fchmod: () => { throw eperm; } });
  expect(c).toEqual({ claimed: true, warnings: [`the lock file ${lockOf(dataDir)} belongs to another user (uid 65534), so its mode stays 0644, not 0600; it holds no secret and locks all the same: remove it while no switchyard instance runs there, so the next start makes its own`] });
  expect(lockPid(dataDir)).toBe(process.pid);
  releaseDataDir(dataDir);
  expect(existsSync(lockOf(dataDir))).toBe(false);
});

test("a lock without a nonce (an earlier version's, which locked by pid alone) naming a live process of this boot refuses the start with a hint; one naming this process's own pid is taken over", async () => {
  const dataDir = scratch("earlier");
  const earlier = `${process.pid}\n${BOOT}`; // this test process stands for the earlier version's running instance
  writeFileSync(lockOf(dataDir), earlier);
  const refused = await tryStart(dataDir);
  expect(typeof refused).toBe("string");
  expect(refused as string).toContain(`switchyard failed to start: an instance of an earlier switchyard version (pid ${process.pid}) may be running with the data directory ${dataDir}: stop it first, or remove its lock file ${lockOf(dataDir)} if it is not running`);
  expect(readFileSync(lockOf(dataDir), "utf8")).toBe(earlier);
  writeFileSync(lockOf(dataDir), `1\n${BOOT}`); // pid 1 lives here too
  expect(() => claimDataDir(dataDir)).toThrow(`an instance of an earlier switchyard version (pid 1) may be running with the data directory ${dataDir}`);
  // this process's own pid: an earlier process of it (a container started again), no instance of it
  writeFileSync(lockOf(dataDir), earlier);
  expect(claimDataDir(dataDir).claimed).toBe(true);
  expect(readFileSync(lockOf(dataDir), "utf8")).toMatch(/\n[0-9a-f]{32}\n$/);
  releaseDataDir(dataDir);
}, 120_000);
