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
  expect(out[0]).toMatch(new RegExp(`^stopped switchyard \\(pid ${holder.pid}, http://127\\.0\\.0\\.1:9, data directory .*\\) in [01]\\.\\d s$`));
}, 20_000);
