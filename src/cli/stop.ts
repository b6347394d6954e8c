/**
 * `switchyard stop` (SPEC 2.2, D-3): stops the instance running with a data directory the way a
 * supervisor does: SIGTERM, the graceful stop (`server.shutdown_grace_ms` for the requests in flight,
 * the last usage flushed, instance.json removed), then waits until its process has exited and says the
 * exit code it left in the data directory's last-exit.json (src/exit-status.ts). The only
 * process it signals is the one that holds the data directory's `instance.lock` (the kernel's flock,
 * src/instance-file.ts) and that its `instance.json` names: never a pid read from a file alone, which may
 * be a crashed instance's reused by another program or a process of another container.
 */
import { closeSync, constants, existsSync, openSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { earlierVersionLock, INSTANCE_LOCK_FILE, liveInstance } from "../instance-file.ts";
import { kernelLock } from "../kernel-lock.ts";
import { EXIT_STATUS_FILE, readExitStatus } from "../exit-status.ts";

/** How long `stop` waits for the process to exit by default, seconds: the default grace period (30 s) and the last flush. */
export const DEFAULT_STOP_TIMEOUT_S = 60;

/**
 * What `stop` found in the data directory: the instance's pid to signal (`stopping`: the time its stop
 * began, ms since the epoch, when it is stopping already: it is waited for, not signalled), nothing
 * running, or a pid it must not signal (why).
 */
export type StopTarget = { pid: number; url?: string; stopping?: number; nonce?: string } | { none: string } | { refuse: string };

/** What {@link stopCommand} prints with, signals with and waits with (tests give their own). */
export interface StopIo {
  out(line: string): void;
  fail(lines: string | readonly string[], code?: number): never;
  /** process.kill */
  kill(pid: number, signal: NodeJS.Signals | 0): void;
  sleep(ms: number): Promise<void>;
  now(): number;
}

/**
 * `switchyard stop [--data-dir DIR] [--timeout SECONDS] [--force]`: one line once the instance has
 * exited, with the exit code it left in the data directory (exit 0; a code other than 0 is a failure,
 * exit 1; none left: said, exit 0, see {@link exitedWith}); nothing running: one line, exit 0 (as `systemctl stop` of a stopped unit); not
 * exited within `timeoutS`: one line, exit 1, and with `force` SIGKILL then (exit 1 all the same: its
 * last requests and usage may be lost). An instance stopping already (its instance.json's `stopping`)
 * is not signalled again, which would end its grace period: it is waited for, said in a first line. A
 * data directory whose lock holder and instance.json disagree, whose lock is held by a process this one
 * cannot see, or that an earlier version's instance may hold is not signalled (exit 1). The instance
 * has exited when its pid is gone or the lock is no longer its own (free, or another's: its pid may be
 * another program's by then); SIGKILL goes only to the pid that still holds the lock.
 */
export async function stopCommand(dataDir: string, timeoutS: number, force: boolean, io: StopIo): Promise<void> {
  const target = findTarget(dataDir);
  if ("none" in target) return io.out(target.none);
  if ("refuse" in target) io.fail(target.refuse);
  const { pid } = target;
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  const what = `switchyard (pid ${pid}${target.url ? `, ${target.url}` : ""}, data directory ${dataDir})`;
  const started = io.now();
  const ago = target.stopping !== undefined ? `${Math.max(0, (started - target.stopping) / 1000).toFixed(1)} s ago` : "";
  const since = target.stopping !== undefined ? `after this stop began waiting (its stop began ${ago})` : "after SIGTERM";
  if (target.stopping !== undefined) {
    io.out(`${what} is stopping already (its stop began ${ago}): waiting for it to exit, without signalling it again (a second SIGTERM would end its grace period now)`);
  } else {
    try {
      io.kill(pid, "SIGTERM");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ESRCH") return exitedWith(`stopped ${what}: it had exited already`, dataDir, target, io);
      io.fail(`cannot signal ${what}: ${(e as Error).message}`);
    }
  }
  let freedAt: number | undefined;
  for (;;) {
    if (gone(pid, io)) break;
    // the lock given back (or another's): it has exited, or is a moment from it; its pid may be another program's soon
    if (lockLeft(lock, pid)) freedAt ??= io.now();
    if (freedAt !== undefined && io.now() - freedAt >= 1000) break;
    if (io.now() - started >= timeoutS * 1000) {
      if (!force) io.fail(`${what} has not exited ${timeoutS} s ${since}; it is still stopping (requests in flight within the grace period server.shutdown_grace_ms, or the last flush): switchyard stop again waits for it without signalling it again (with --timeout SECONDS to wait longer), or --force ends it (SIGKILL: its last requests and usage may be lost)`);
      if (gone(pid, io) || lockLeft(lock, pid)) break; // exited meanwhile: its pid may be another program's now
      if (holderNow(lock) !== pid) io.fail(`${what} had not exited ${timeoutS} s ${since}, and which process holds ${lock} cannot be told now: not killed (stop it with its supervisor)`);
      try {
        io.kill(pid, "SIGKILL");
      } catch {
        // exited meanwhile
      }
      io.fail(`${what} had not exited ${timeoutS} s ${since}: killed it (SIGKILL); its last requests and usage may be lost, and its instance.json is left behind (the next start takes it over)`);
    }
    await io.sleep(50);
  }
  exitedWith(`stopped ${what} in ${((io.now() - started) / 1000).toFixed(1)} s`, dataDir, target, io);
}

/**
 * Ends a stop whose instance has exited: `stopped` and the exit code the instance left in the data
 * directory's last-exit.json (src/exit-status.ts) when it names that instance (its pid, and its start's
 * nonce when its instance.json had one): 0 is said on the line (exit 0), any other code is a failure
 * (exit 1) with what the instance said made it fail. No such file (killed or crashed, or an earlier
 * version's instance, which leave none): says so, exit 0, without guessing the code.
 */
function exitedWith(stopped: string, dataDir: string, target: { pid: number; nonce?: string }, io: StopIo): void {
  const status = readExitStatus(dataDir, target.pid, target.nonce);
  if (!status) return io.out(`${stopped}; its exit code is not known: it left no ${join(dataDir, EXIT_STATUS_FILE)} (an instance killed or crashed leaves none, and so does one of an earlier switchyard version; its log's last lines say how it ended)`);
  if (status.exitCode === 0) return io.out(`${stopped} (exit code 0)`);
  io.fail(`${stopped}, but it failed: exit code ${status.exitCode}${status.why ? ` (${status.why})` : ""}`);
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

/** Whether `pid` no longer holds `lock`: it is free (or gone), or another process holds it; false also when that cannot be told. */
function lockLeft(lock: string, pid: number): boolean {
  const h = holderNow(lock);
  return h === "free" || (h !== undefined && h !== pid);
}

/** The pid holding `lock` now ({@link lockHolder}); "free" or undefined (cannot tell) otherwise. */
function holderNow(lock: string): number | "free" | undefined {
  const h = lockHolder(lock);
  return h === "free" ? h : "pid" in h ? h.pid : undefined;
}

/**
 * The process to stop in `dataDir`: the holder of its instance.lock (Linux: the pid /proc/locks gives
 * for the lock file, as this process sees pids; elsewhere the pid written in the lock, once a flock of
 * it fails), which must be the pid its instance.json names when there is one. Nothing running: no lock
 * held (a lock or instance.json left by a crash included), but as a start does, an earlier version's
 * instance is refused: an instance.json naming a live process with no lock file (a version without
 * it), or an unheld lock file without a nonce naming one (the version that locked by pid alone).
 */
export function findTarget(dataDir: string): StopTarget {
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  const file = join(dataDir, "instance.json");
  const inst = readJson(file);
  const none = `no switchyard instance is running with the data directory ${dataDir}; nothing to stop${existsSync(file) ? ` (its ${file} was left by an instance that did not stop cleanly: the next start takes it over)` : ""}`;
  const holder = existsSync(lock) ? lockHolder(lock) : "free";
  if (holder === "free") {
    const earlier = existsSync(lock) ? earlierVersionLock(dataDir) : liveInstance(dataDir);
    if (!earlier) return { none };
    const named = existsSync(lock) ? `its lock file ${lock} names that live process` : `its ${file} names that live process`;
    const clear = existsSync(lock) ? `remove ${lock}` : `remove ${file}`;
    return { refuse: `an instance of an earlier switchyard version (pid ${earlier.pid}${earlier.url ? `, ${earlier.url}` : ""}) may be running with the data directory ${dataDir}: ${named}, and no process holds the lock this version takes, so switchyard stop does not signal it; stop it the way it was started (its supervisor, Ctrl-C, or kill -TERM ${earlier.pid} once you know that pid is switchyard's), or, if no switchyard runs there, ${clear} (a start refuses the directory until then)` };
  }
  if ("refuse" in holder) return holder;
  const url = typeof inst?.url === "string" ? inst.url : undefined;
  if (inst !== undefined && inst.pid !== holder.pid) {
    return { refuse: `not signalling anything: ${lock} is held by pid ${holder.pid} but ${file} names pid ${String(inst.pid)} (another start is under way, or the file is not this instance's); run switchyard stop again in a moment` };
  }
  const stopping = typeof inst?.stopping === "number" ? inst.stopping : undefined;
  const nonce = typeof inst?.nonce === "string" ? inst.nonce : undefined; // its start's: the exit status it leaves names it
  return { pid: holder.pid, ...(url ? { url } : {}), ...(stopping !== undefined ? { stopping } : {}), ...(nonce !== undefined ? { nonce } : {}) };
}

/**
 * Who holds the flock on `lock`: its pid, "free" when nobody does (or the file is gone), or why it
 * cannot be told (a refusal). Linux: /proc/locks, matched by the file's device and inode. A holder in
 * another PID namespace (another container) is not listed there at all (or, on older kernels, as pid 0)
 * while a flock of our own finds the lock held: it is refused, never signalled by the pid it wrote into
 * the file, which is its own namespace's and may be another process's here. Without /proc/locks (macOS,
 * the BSDs: no PID namespaces) a flock of our own, which fails while it is held (taken and dropped at
 * once when it does not), and the pid the holder wrote into the file. Linux without a readable
 * /proc/locks (no /proc): refused.
 */
function lockHolder(lock: string): { pid: number } | "free" | { refuse: string } {
  const unseen = { refuse: `not signalling anything: ${lock} is held by a process this one cannot see (an instance in another container or PID namespace); stop it there (its supervisor, or switchyard stop run in that container)` };
  let st;
  try {
    st = statSync(lock);
  } catch {
    return "free";
  }
  const fromProc = procLocksHolder(st.dev, st.ino);
  if (fromProc === 0) return unseen;
  if (typeof fromProc === "number") return { pid: fromProc };
  const noProc = fromProc === "no /proc/locks";
  if (noProc && process.platform === "linux") return { refuse: `cannot tell which process holds ${lock} (/proc/locks cannot be read): stop the instance with its supervisor, or send SIGTERM to its pid` };
  const flock = kernelLock();
  if (!flock) return { refuse: `cannot tell which process holds ${lock} (no flock(2) here): stop the instance with its supervisor, or send SIGTERM to its pid` };
  let fd: number;
  try {
    fd = openSync(lock, constants.O_RDONLY);
  } catch {
    return "free";
  }
  try {
    if (flock.tryExclusive(fd)) return "free";
  } catch {
    return { refuse: `cannot tell which process holds ${lock} (flock(2) fails on it): stop the instance with its supervisor, or send SIGTERM to its pid` };
  } finally {
    closeSync(fd);
  }
  if (!noProc) {
    const again = procLocksHolder(st.dev, st.ino); // a start that took it between the two looks
    return typeof again === "number" && again !== 0 ? { pid: again } : unseen;
  }
  const m = /^([1-9]\d*)\n/.exec(readFileSync(lock, "utf8"));
  return m ? { pid: Number(m[1]) } : { refuse: `cannot tell which process holds ${lock} (it names no pid): stop the instance with its supervisor, or send SIGTERM to its pid` };
}

/**
 * The pid /proc/locks gives for a FLOCK on the file of device `dev` and inode `ino` (0: a process this
 * one cannot see, on kernels that list it so); "not listed" when it lists none (free, or held outside
 * this PID namespace, which recent kernels leave out); "no /proc/locks" when it cannot be read.
 */
function procLocksHolder(dev: number, ino: number): number | "not listed" | "no /proc/locks" {
  let text: string;
  try {
    text = readFileSync("/proc/locks", "utf8");
  } catch {
    return "no /proc/locks";
  }
  // Linux's dev_t: the major number in bits 8-19 (and 32 up), the minor in bits 0-7 and 20 up; /proc/locks prints both in hex
  const major = Math.floor(dev / 256) & 0xfff;
  const minor = (dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00);
  for (const line of text.split("\n")) {
    const m = /^\d+:\s+FLOCK\s+\w+\s+WRITE\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (m && Number(m[4]) === ino && parseInt(m[2], 16) === major && parseInt(m[3], 16) === minor) return Number(m[1]);
  }
  return "not listed";
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
