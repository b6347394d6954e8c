/**
 * instance.json in the data directory (SPEC 2.2): who owns the directory (pid, URL, admin token), so
 * the CLI finds the running instance; and instance.lock, the claim a start takes before anything else,
 * so a second one refuses to start on the same data, also at the same moment.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The pid recorded in an instance file, or undefined when there is none or it is unreadable. */
export function instanceOwner(file: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(file, "utf8")) as { pid?: unknown }).pid;
    return typeof pid === "number" ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The instance that holds `dataDir`: its instance.json names a live process other than this one (a
 * stale file from a crash names none), with its URL when recorded; undefined when the directory is free.
 */
export function liveInstance(dataDir: string): { pid: number; url?: string } | undefined {
  const file = join(dataDir, "instance.json");
  if (!existsSync(file)) return undefined;
  const pid = instanceOwner(file);
  if (pid === undefined || pid === process.pid || !alive(pid)) return undefined; // a stale file names no live process
  try {
    const url = (JSON.parse(readFileSync(file, "utf8")) as { url?: unknown }).url;
    return typeof url === "string" && url !== "" ? { pid, url } : { pid };
  } catch {
    return { pid };
  }
}

/** Whether a process `pid` exists (one of another user's too: EPERM); only "no such process" is false. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The file in the data directory that the instance holding it creates exclusively, with its pid (and boot id). */
export const INSTANCE_LOCK_FILE = "instance.lock";

/** A lock file that holds no pid yet is one being written for this long at most, ms; older, it is a crash's. */
const UNWRITTEN_LOCK_MS = 2_000;

/** This boot of the machine (Linux: /proc/sys/kernel/random/boot_id), undefined elsewhere. */
const BOOT_ID = (() => {
  try {
    const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return /^[0-9a-f-]{36}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
})();

/** The lock file's text for this process: its pid, then the boot id where there is one. */
const LOCK_TEXT = `${process.pid}\n${BOOT_ID ? `${BOOT_ID}\n` : ""}`;

/**
 * One instance per data directory: the instance owns the SQLite file and instance.json (SPEC 2.2).
 * Claims `dataDir` for this process before anything else of the start: creates {@link INSTANCE_LOCK_FILE}
 * with O_EXCL (`wx`) holding its pid, so of two starts at the same moment exactly one gets it (reading
 * instance.json, written only once listening, let both through: try22 P1). A lock whose pid is no live
 * process (a crash, a kill -9), or that an earlier boot of the machine wrote (its pid may be another
 * program's now), is taken over, and then so is the instance.json it left; the removal is done under a
 * second exclusive file, so two starts that both found it stale cannot remove each other's new lock. A
 * lock of this process's own pid (an earlier start in this process) is kept. Without a lock to take over,
 * also refuses a directory whose instance.json names another live process (an instance of a version
 * without the lock). {@link releaseDataDir} gives it back.
 * @returns true when this call made the lock, false when this process held it already
 * @throws Error naming the directory and the holder's pid (and its URL once it listens) when another live
 *   process holds it; the file system's error when the directory cannot be written.
 */
export function claimDataDir(dataDir: string): boolean {
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  let tookOver = false;
  let made = false;
  for (const until = Date.now() + 10_000; ; ) {
    if (Date.now() > until) throw new Error(`cannot claim the data directory ${dataDir}: its ${INSTANCE_LOCK_FILE} stays unreadable; remove it if no switchyard instance runs there`);
    try {
      writeFileSync(lock, LOCK_TEXT, { mode: 0o600, flag: "wx" });
      made = true;
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const held = readLock(lock);
    if (held === undefined) continue; // removed meanwhile
    const thisBoot = held.boot === undefined || held.boot === BOOT_ID;
    if (held.pid === process.pid && thisBoot) break;
    if (held.pid !== undefined && thisBoot && alive(held.pid)) refuse(dataDir, held.pid);
    if (held.pid === undefined && Date.now() - held.mtimeMs < UNWRITTEN_LOCK_MS) {
      Bun.sleepSync(20); // created, its pid not written yet
      continue;
    }
    removeStaleLock(lock, held.text);
    tookOver = true;
  }
  const owner = tookOver ? undefined : liveInstance(dataDir); // the stale lock's instance left it
  if (owner) {
    if (made) releaseDataDir(dataDir);
    refuse(dataDir, owner.pid, owner.url);
  }
  return made;
}

/** Gives back the data directory {@link claimDataDir} claimed: removes the lock file if it is still this process's. */
export function releaseDataDir(dataDir: string): void {
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  if (readLock(lock)?.text === LOCK_TEXT) rmSync(lock, { force: true });
}

/** Throws the refusal: the holder's pid and its URL (from its instance.json once it listens). */
function refuse(dataDir: string, pid: number, url?: string): never {
  const listening = url ?? (liveInstance(dataDir)?.pid === pid ? liveInstance(dataDir)?.url : undefined);
  const where = listening ?? `still starting; it holds ${join(dataDir, INSTANCE_LOCK_FILE)}`;
  // A lock left by a crash whose pid another program has since taken reads as a live holder (no kernel
  // lock tells them apart): say how to clear it when it is not listening (review21b Q3).
  const stale = listening ? "" : ` (if no switchyard runs with this directory, that lock is a crashed instance's whose pid another program now has: remove ${join(dataDir, INSTANCE_LOCK_FILE)})`;
  throw new Error(`another switchyard instance (pid ${pid}, ${where}) is running with the data directory ${dataDir}; stop it or use --data-dir${stale}`);
}

/** A lock file's text, its pid (and boot id) when it holds one, and when it was last written; undefined when there is none. */
function readLock(lock: string): { text: string; pid?: number; boot?: string; mtimeMs: number } | undefined {
  try {
    const mtimeMs = statSync(lock).mtimeMs;
    const text = readFileSync(lock, "utf8");
    const m = /^([1-9]\d*)\n(?:([0-9a-f-]{36})\n)?$/.exec(text);
    return m ? { text, pid: Number(m[1]), ...(m[2] ? { boot: m[2] } : {}), mtimeMs } : { text, mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Removes the stale lock `lock` if it still reads `text`, under `lock`.takeover (created exclusively: one
 * remover at a time, held for a read and an unlink). A takeover file older than {@link UNWRITTEN_LOCK_MS}
 * is a crash's in that moment and is removed. Waits a moment when another start holds it.
 */
function removeStaleLock(lock: string, text: string): void {
  const guard = `${lock}.takeover`;
  try {
    writeFileSync(guard, `${process.pid}\n`, { mode: 0o600, flag: "wx" });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const g = readLock(guard);
    if (g && Date.now() - g.mtimeMs >= UNWRITTEN_LOCK_MS) rmSync(guard, { force: true });
    else Bun.sleepSync(10);
    return;
  }
  try {
    if (readLock(lock)?.text === text) rmSync(lock, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

/** The file in the data directory that holds its {@link dataDirId}. */
export const DATA_DIR_ID_FILE = "data-dir-id";

/**
 * A random id of this data directory (32 hex digits), made at its first start on a shared store and kept in
 * {@link DATA_DIR_ID_FILE} (mode 0600) for every later one: it tells apart two data directories that
 * have the same path on hosts of the same name (two containers on host networking, each with its own
 * volume at `/data`, review15 R6), which the path and host name alone do not; the instance started again
 * on one directory finds the same id there. An unreadable or malformed file is replaced by a new id.
 * @throws when the directory cannot be written (the start fails as it would writing instance.json)
 */
export function dataDirId(dataDir: string): string {
  const file = join(dataDir, DATA_DIR_ID_FILE);
  const read = () => {
    try {
      const id = readFileSync(file, "utf8").trim();
      return /^[0-9a-f]{32}$/.test(id) ? id : undefined;
    } catch {
      return undefined;
    }
  };
  const found = read();
  if (found) return found;
  const id = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
  try {
    writeFileSync(file, `${id}\n`, { mode: 0o600, flag: "wx" }); // two starts at once: the first file wins
  } catch {
    const other = read();
    if (other) return other;
    writeFileSync(file, `${id}\n`, { mode: 0o600 }); // a malformed file
  }
  return read() ?? id;
}
