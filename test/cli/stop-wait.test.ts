/**
 * `switchyard stop`'s wait (src/cli/stop.ts): the instance has exited once the data directory's lock is
 * no longer its own, even while its pid answers (taken by another program meanwhile), and --force kills
 * no pid that does not hold the lock.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopCommand, type StopIo } from "../../src/cli/stop.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A data directory whose instance.lock a `flock` process holds (its pid in the file and in instance.json), as a running instance does. */
async function heldDir(): Promise<{ dir: string; holder: Bun.Subprocess }> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-stop-wait-"));
  dirs.push(dir);
  const lock = join(dir, "instance.lock");
  writeFileSync(lock, "");
  const holder = Bun.spawn(["flock", "-n", "-o", lock, "sleep", "20"]);
  for (let i = 0; i < 100 && !(await Bun.file("/proc/locks").text()).includes(` ${holder.pid} `); i++) await Bun.sleep(20);
  writeFileSync(lock, `${holder.pid}\n${"a".repeat(32)}\n`);
  writeFileSync(join(dir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:9", pid: holder.pid, adminToken: "x", nonce: "a".repeat(32) }));
  return { dir, holder };
}

/** An io whose `kill(pid, 0)` always finds the pid alive (another program has it once the holder exits); SIGTERM reaches the real holder. */
function reusedPidIo(signals: string[], out: string[]): StopIo {
  return {
    out: (l) => void out.push(l),
    fail: (l) => {
      throw new Error(typeof l === "string" ? l : l.join("\n"));
    },
    kill: (pid, signal) => {
      if (signal === 0) return;
      signals.push(String(signal));
      if (signal === "SIGTERM") process.kill(pid, "SIGTERM");
    },
    sleep: (ms) => Bun.sleep(ms),
    now: () => Date.now(),
  };
}

test.skipIf(process.platform !== "linux")("the lock let go while the pid still answers: stopped (exit 0) within about a second, and --force sends no SIGKILL to that pid", async () => {
  const { dir, holder } = await heldDir();
  const signals: string[] = [];
  const out: string[] = [];
  await stopCommand(dir, 5, true, reusedPidIo(signals, out));
  await holder.exited;
  expect(signals).toEqual(["SIGTERM"]);
  expect(out).toHaveLength(1);
  expect(out[0]).toMatch(new RegExp(`^stopped switchyard \\(pid ${holder.pid}, http://127\\.0\\.0\\.1:9, data directory .*\\) in [01]\\.\\d s; its exit code is not known: it left no .*last-exit\\.json \\(an instance killed or crashed leaves none`));
}, 20_000);

test.skipIf(process.platform !== "linux")("the exit status the instance left: 0 said on the line (exit 0); another code is a failure with its reason (exit 1); a file of another start of that pid is not read", async () => {
  const cases: Array<{ left: Record<string, unknown>; out?: RegExp; fail?: RegExp }> = [
    { left: { exitCode: 0 }, out: / in [01]\.\d s \(exit code 0\)$/ },
    { left: { exitCode: 1, why: "writes were lost while the database was away" }, fail: / in [01]\.\d s, but it failed: exit code 1 \(writes were lost while the database was away\)$/ },
    { left: { exitCode: 1, nonce: "b".repeat(32) }, out: /; its exit code is not known: it left no / },
  ];
  for (const c of cases) {
    const { dir, holder } = await heldDir();
    // the holder stands for the instance; the file is what the instance writes just before it exits (src/exit-status.ts), here at once
    const status = { pid: holder.pid, nonce: "a".repeat(32), time: Date.now(), ...c.left };
    const out: string[] = [];
    const io: StopIo = {
      ...reusedPidIo([], out),
      kill: (pid, signal) => {
        if (signal === 0) return; // its pid answers on (another program's): the lock let go tells
        writeFileSync(join(dir, "last-exit.json"), JSON.stringify(status));
        process.kill(pid, signal);
      },
    };
    const failed = await stopCommand(dir, 5, false, io).then(
      () => undefined,
      (e: Error) => e.message,
    );
    if (c.out) {
      expect(failed).toBeUndefined();
      expect(out).toHaveLength(1);
      expect(out[0]).toMatch(c.out);
    } else {
      expect(out).toEqual([]);
      expect(failed).toMatch(c.fail!);
    }
  }
}, 30_000);

