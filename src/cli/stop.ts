/**
 * `switchyard stop` (SPEC 2.2, D-3): stops the instance running with a data directory the way a
 * supervisor does: SIGTERM, the graceful stop (`server.shutdown_grace_ms` for the requests in flight,
 * the last usage flushed, instance.json removed), then waits until its process has exited. The only
 * process it signals is the one that holds the data directory's `instance.lock` (the kernel's flock,
 * src/instance-file.ts) and that its `instance.json` names: never a pid read from a file alone, which may
 * be a crashed instance's reused by another program or a process of another container.
 */
import { closeSync, constants, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { INSTANCE_LOCK_FILE } from "../instance-file.ts";
import { kernelLock } from "../kernel-lock.ts";

/** How long `stop` waits for the process to exit by default, seconds: the default grace period (30 s) and the last flush. */
export const DEFAULT_STOP_TIMEOUT_S = 60;

/** What `stop` found in the data directory: the instance's pid to signal, nothing running, or a pid it must not signal (why). */
export type StopTarget = { pid: number; url?: string } | { none: string } | { refuse: string };

/** What {@link stopCommand} prints with, signals with and waits with (tests give their own). */
export interface StopIo {
  out(line: string): void;
  fail(line: string, code?: number): never;
  /** process.kill */
  kill(pid: number, signal: NodeJS.Signals | 0): void;
  sleep(ms: number): Promise<void>;
  now(): number;
}

/**
 * `switchyard stop [--data-dir DIR] [--timeout SECONDS] [--force]`: one line and exit 0 once the
 * instance has exited; nothing running: one line, exit 0 (as `systemctl stop` of a stopped unit); not
 * exited within `timeoutS`: one line, exit 1, and with `force` SIGKILL then (exit 1 all the same: its
 * last requests and usage may be lost). A data directory whose lock holder and instance.json disagree
 * is not signalled (exit 1).
 */
export async function stopCommand(dataDir: string, timeoutS: number, force: boolean, io: StopIo): Promise<void> {
  const target = findTarget(dataDir);
  if ("none" in target) return io.out(target.none);
  if ("refuse" in target) io.fail(target.refuse);
  const { pid } = target;
  const what = `switchyard (pid ${pid}${target.url ? `, ${target.url}` : ""}, data directory ${dataDir})`;
  const started = io.now();
  try {
    io.kill(pid, "SIGTERM");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return io.out(`stopped ${what}: it had exited already`);
    io.fail(`cannot signal ${what}: ${(e as Error).message}`);
  }
  while (!gone(pid, io)) {
    if (io.now() - started >= timeoutS * 1000) {
      if (!force) io.fail(`${what} has not exited ${timeoutS} s after SIGTERM (requests still in flight within the grace period server.shutdown_grace_ms, or the last flush); it is still stopping: wait longer with --timeout SECONDS, or end it now with --force (SIGKILL: its last requests and usage may be lost)`);
      try {
        io.kill(pid, "SIGKILL");
      } catch {
        // exited meanwhile
      }
      io.fail(`${what} had not exited ${timeoutS} s after SIGTERM: killed it (SIGKILL); its last requests and usage may be lost, and its instance.json is left behind (the next start takes it over)`);
    }
    await io.sleep(50);
  }
  io.out(`stopped ${what} in ${((io.now() - started) / 1000).toFixed(1)} s`);
}

/** Whether `pid` has exited: no such process, or a zombie its parent has not reaped yet (Linux: state Z). */
function gone(pid: number, io: Pick<StopIo, "kill">): boolean {
  try {
    io.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\)/, ""));
  } catch {
    return false;
  }
}

/**
 * The process to stop in `dataDir`: the holder of its instance.lock (Linux: the pid /proc/locks gives
 * for the lock file, as this process sees pids; elsewhere the pid written in the lock, once a flock of
 * it fails), which must be the pid its instance.json names when there is one. Nothing running: no lock
 * held (a lock or instance.json left by a crash included).
 */
export function findTarget(dataDir: string): StopTarget {
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  const file = join(dataDir, "instance.json");
  const inst = readJson(file);
  const none = `no switchyard instance is running with the data directory ${dataDir}; nothing to stop${existsSync(file) ? ` (its ${file} was left by an instance that did not stop cleanly: the next start takes it over)` : ""}`;
  if (!existsSync(lock)) return { none };
  const holder = lockHolder(lock);
  if (holder === "free") return { none };
  if (holder === undefined) return { refuse: `cannot tell which process holds ${lock} (no flock(2) here): stop the instance with its supervisor, or send SIGTERM to its pid` };
  const url = typeof inst?.url === "string" ? inst.url : undefined;
  if (inst !== undefined && inst.pid !== holder) {
    return { refuse: `not signalling anything: ${lock} is held by pid ${holder} but ${file} names pid ${String(inst.pid)} (another start is under way, or the file is not this instance's); run switchyard stop again in a moment` };
  }
  return url ? { pid: holder, url } : { pid: holder };
}

/**
 * The pid holding the flock on `lock`, "free" when nobody holds it, undefined when it cannot be told.
 * Linux: /proc/locks, matched by the file's device and inode (a holder outside this pid namespace shows
 * as pid 0 there: undefined); when it lists none (or there is no /proc/locks), a flock of our own, which fails while it is held (taken and dropped at
 * once when it does not), and the pid the holder wrote into the file.
 */
function lockHolder(lock: string): number | "free" | undefined {
  let st;
  try {
    st = statSync(lock);
  } catch {
    return "free";
  }
  const fromProc = procLocksHolder(st.dev, st.ino);
  if (fromProc !== undefined) return fromProc === 0 ? undefined : fromProc; // not listed (or no /proc/locks): ask flock
  const flock = kernelLock();
  if (!flock) return undefined;
  let fd: number;
  try {
    fd = openSync(lock, constants.O_RDONLY);
  } catch {
    return "free";
  }
  try {
    if (flock.tryExclusive(fd)) return "free";
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  const m = /^([1-9]\d*)\n/.exec(readFileSync(lock, "utf8"));
  return m ? Number(m[1]) : undefined;
}

/**
 * The pid /proc/locks gives for a FLOCK on the file of device `dev` and inode `ino` (0: a process this
 * one cannot see); undefined when it lists none or there is no /proc/locks (not Linux).
 */
function procLocksHolder(dev: number, ino: number): number | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  // Linux's dev_t: the major number in bits 8-19 (and 32 up), the minor in bits 0-7 and 20 up; /proc/locks prints both in hex
  const major = Math.floor(dev / 256) & 0xfff;
  const minor = (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00);
  for (const line of text.split("\n")) {
    const m = /^\d+:\s+FLOCK\s+\w+\s+WRITE\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (m && Number(m[4]) === ino && parseInt(m[2], 16) === major && parseInt(m[3], 16) === minor) return Number(m[1]);
  }
  return undefined;
}

/** A JSON file's object, undefined when missing or unreadable. */
function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const j = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return j && typeof j === "object" ? (j as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
