/**
 * instance.json in the data directory (SPEC 2.2): who owns the directory (pid, URL, admin token), so
 * the CLI finds the running instance; and instance.lock, the claim a start takes before anything else,
 * so a second one refuses to start on the same data, also at the same moment.
 */
import { closeSync, constants, existsSync, fchmodSync, fstatSync, ftruncateSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { FlockError, kernelLock, type KernelLock } from "./kernel-lock.ts";

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
 * Whether the instance file `file` is the one the start of `nonce` wrote (its `nonce`, a per-start
 * random value, not its pid: two containers' instances can both be pid 1); false when it is missing,
 * unreadable or another start's.
 */
export function writtenBy(file: string, nonce: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { nonce?: unknown }).nonce === nonce;
  } catch {
    return false;
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

/** The file in the data directory that the instance holding it keeps open and locked, with its pid (and boot id) and a nonce. */
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

/**
 * The directories this process has claimed, by real path: the lock file's descriptor (held open, and
 * flocked, for the life of the claim; absent in the fallback) and the text written into it.
 */
const claims = new Map<string, { fd?: number; text: string }>();

/** A random nonce, 32 hex digits: tells apart files two processes wrote, also with the same pid (two containers' pid 1). */
export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
}

/** The key of {@link claims}: the directory's real path (its resolved path once it is gone). */
function claimKey(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return resolve(dataDir);
  }
}

/**
 * One instance per data directory: the instance owns the SQLite file and instance.json (SPEC 2.2).
 * Claims `dataDir` for this process before anything else of the start: opens {@link INSTANCE_LOCK_FILE}
 * (made when missing, mode 0600), takes an exclusive flock(2) on it without waiting and keeps it open,
 * so the lock is the kernel's and dies with the process (src/kernel-lock.ts); then writes its pid (and
 * boot id) and a nonce into it, for the refusal message and the release. Another process holding it
 * (another instance, also in another container with the same pid) makes the claim refuse. A lock file
 * nobody holds was left by a process that ended (a crash, kill -9): it is taken over whatever pid it
 * names (but for an earlier version's, below), and so is the instance.json it left. A lock file removed between its opening and its lock (a
 * stop) is opened again. A directory this process has claimed already (several apps of one process, in
 * tests) is kept: `claimed` false. Without a lock file to take over, also refuses a directory whose instance.json
 * names another live process (an instance of a version without the lock file). An instance of the
 * version that locked by pid alone (O_EXCL, earlier on 2026-12-06) holds no flock, and its lock file holds no
 * nonce: such a lock naming a live process of this boot other than this one refuses the start ("an
 * instance of an earlier switchyard version … may be running"); one whose pid is no process, or of an
 * earlier boot, or this process's own (an earlier process of the pid: a container started again) is taken over.
 * A lock file owned by another user whose mode this process cannot narrow to 0600 (EPERM) is kept as
 * it is, with a warning: the lock holds (the kernel's, on the open file) and the file holds no secret.
 *
 * Fallback, where flock cannot be loaded (Windows, an unknown C library) or fails saying the file system
 * has no locks (ENOLCK, EOPNOTSUPP, ENOSYS: NFS without its lock daemon, some FUSE and SMB mounts; with
 * a warning): the lock file is created exclusively (O_EXCL) with the pid, and a lock whose pid is no live process, or one of an earlier boot,
 * or this process's own pid without a claim of this process, is taken over (removed under a second
 * exclusive file, so two starts that both found it stale cannot remove each other's new lock). There a
 * crashed instance's pid taken since by another program reads as a live holder, and two processes of
 * one pid in two pid namespaces are not told apart.
 * @param flock the kernel's lock (src/kernel-lock.ts); null: the fallback (tests)
 * @param writes the writes into the lock file once it is locked (tests: one that fails)
 * @returns whether this call claimed the directory (false: this process held it already) and the
 *   warnings the start logs (the fallback taken because flock failed; a mode left wider)
 * @throws Error naming the directory and the holder's pid (and its URL once it listens) when another
 *   process holds it, or an earlier version's instance may; the file system's error when the directory
 *   cannot be written (the lock file closed); Error with the errno when flock fails otherwise than
 *   "held" and "no locks" (EBADF).
 */
export function claimDataDir(dataDir: string, flock: KernelLock | null = kernelLock() ?? null, writes: LockFileWrites = FILE_WRITES): DataDirClaim {
  const key = claimKey(dataDir);
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  const mine = claims.get(key);
  if (mine && stillMine(lock, mine)) return { claimed: false, warnings: [] };
  if (mine) forget(key); // its lock file was removed or replaced behind its back: claim it again
  const text = `${process.pid}\n${BOOT_ID ? `${BOOT_ID}\n` : ""}${newNonce()}\n`;
  const claim = flock ? lockFile(dataDir, lock, text, flock, writes) : { ...claimExclusive(dataDir, lock, text), warnings: [] };
  claims.set(key, { fd: claim.fd, text });
  const owner = claim.tookOver ? undefined : liveInstance(dataDir); // a stale lock's instance left its instance.json
  if (owner) {
    releaseDataDir(dataDir);
    refuse(dataDir, owner.pid, owner.url, false);
  }
  return { claimed: true, warnings: claim.warnings };
}

/** What {@link claimDataDir} did: whether this call claimed the directory, and warnings for the start to log (one line each). */
export interface DataDirClaim {
  claimed: boolean;
  warnings: string[];
}

/** The writes into the lock file once it is locked (see {@link claimDataDir}); each throws the file system's error. */
export interface LockFileWrites {
  ftruncate(fd: number, length: number): void;
  /** Writes `text` at offset 0. */
  write(fd: number, text: string): void;
  fchmod(fd: number, mode: number): void;
}

const FILE_WRITES: LockFileWrites = {
  ftruncate: (fd, length) => ftruncateSync(fd, length),
  write: (fd, text) => void writeSync(fd, Buffer.from(text), 0, Buffer.byteLength(text), 0),
  fchmod: (fd, mode) => fchmodSync(fd, mode),
};

/**
 * Opens and flocks `lock` (see {@link claimDataDir}), writes `text` into it: its descriptor, held open,
 * whether the file was there already (a lock nobody held, taken over), and the warnings. Where flock
 * says the file system has no locks: the fallback's claim, with a warning. The descriptor is closed on
 * any throw.
 */
function lockFile(dataDir: string, lock: string, text: string, flock: KernelLock, writes: LockFileWrites): { fd?: number; tookOver: boolean; warnings: string[] } {
  for (;;) {
    let fd: number;
    let tookOver = false;
    try {
      fd = openSync(lock, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      try {
        fd = openSync(lock, constants.O_RDWR);
        tookOver = true;
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code === "ENOENT") continue; // removed meanwhile (a stop)
        throw e2;
      }
    }
    let held: boolean;
    try {
      held = flock.tryExclusive(fd);
    } catch (e) {
      if (e instanceof FlockError && e.noLocks) return claimWithoutLocks(dataDir, lock, text, fd, tookOver, e, writes);
      closeSync(fd);
      throw new Error(`cannot lock ${lock}: ${(e as Error).message}; the file system of the data directory must support flock(2)`);
    }
    if (!held) {
      closeSync(fd);
      const holder = readHolder(lock);
      refuse(dataDir, holder.pid, holder.pid === undefined ? undefined : listeningUrl(dataDir, holder.pid, holder.mtimeMs), false);
    }
    if (!sameFile(fd, lock)) {
      closeSync(fd); // removed by its holder's stop after our open: lock the file that is there now
      continue;
    }
    try {
      if (tookOver) refuseEarlierVersion(dataDir, lock);
      writes.ftruncate(fd, 0);
      writes.write(fd, text);
      const wider = narrowMode(lock, fd, writes); // a lock file taken over keeps no wider mode
      return { fd, tookOver, warnings: wider ? [wider] : [] };
    } catch (e) {
      closeSync(fd); // else the lock stays held by this process until it ends, a failed start's too
      throw e;
    }
  }
}

/**
 * The claim where flock failed with `failure` saying the file system has no locks: a lock file this
 * start created (`fd`, exclusively) gets `text` and is closed; one that was there is closed and goes
 * to the fallback's {@link claimExclusive}, which takes it over only when its pid is no live process.
 */
function claimWithoutLocks(dataDir: string, lock: string, text: string, fd: number, tookOver: boolean, failure: FlockError, writes: LockFileWrites): { tookOver: boolean; warnings: string[] } {
  const warning = `cannot lock ${lock} with flock(2) (${failure.message}): its file system has no locks; the data directory is claimed with that file created exclusively instead, which tells instances apart by pid only (two containers' pid 1 on one data directory are not told apart, and a crashed instance's lock whose pid another program has since refuses a start until it is removed)`;
  if (tookOver) {
    closeSync(fd);
    return { ...claimExclusive(dataDir, lock, text), warnings: [warning] };
  }
  try {
    writes.write(fd, text);
  } finally {
    closeSync(fd);
  }
  return { tookOver: false, warnings: [warning] };
}

/**
 * Refuses the start when the lock file `lock` (locked by this process now, not yet written) is one an
 * instance of the earlier version that locked by pid alone wrote (no nonce) and its pid is a live
 * process of this boot other than this one: that instance holds no flock, but it most likely still runs.
 */
function refuseEarlierVersion(dataDir: string, lock: string): void {
  const held = earlierVersionLock(dataDir);
  if (held) throw new Error(`an instance of an earlier switchyard version (pid ${held.pid}${held.url ? `, ${held.url}` : ""}) may be running with the data directory ${dataDir}: stop it first, or remove its lock file ${lock} if it is not running`);
}

/**
 * The instance of the earlier version that locked by pid alone which the unheld lock file of `dataDir`
 * names: its pid (and URL, from instance.json) when the file holds no nonce and its pid is a live process
 * of this boot other than this one; undefined otherwise. What a start refuses for when it takes such a
 * lock over (`switchyard stop` says the same).
 */
export function earlierVersionLock(dataDir: string): { pid: number; url?: string } | undefined {
  const held = readLock(join(dataDir, INSTANCE_LOCK_FILE));
  if (held?.pid === undefined || held.nonce !== undefined || held.pid === process.pid) return undefined;
  if ((held.boot !== undefined && held.boot !== BOOT_ID) || !alive(held.pid)) return undefined;
  const url = listeningUrl(dataDir, held.pid);
  return url ? { pid: held.pid, url } : { pid: held.pid };
}

/**
 * Marks the instance.json `file` the start of `nonce` wrote as stopping: adds `stopping`, the time its
 * stop began (ms since the epoch), which `switchyard stop` reads so as to wait for it rather than send
 * a second SIGTERM (which ends the grace period). The file is replaced whole (written beside it, mode
 * 0600, and renamed), so a reader never sees half of it. Nothing when the file is not that start's or
 * cannot be written (the mark is advice: the stop goes on without it).
 * @returns a warning when the file could not be written (a full disk): the half-written copy beside it
 *   is removed, and `switchyard stop` run now would not know the stop began; undefined otherwise
 */
export function markStopping(file: string, nonce: string, now: number): string | undefined {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return undefined; // unreadable: the stop goes on unmarked
  }
  if (j.nonce !== nonce) return undefined;
  const tmp = `${file}.${nonce}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify({ ...j, stopping: now }, null, 2), { mode: 0o600 });
    renameSync(tmp, file);
    return undefined;
  } catch (err) {
    // an empty or cut copy left beside it would stay there (the tryout's 0-byte `instance.json.<hash>.tmp`)
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing more to do
    }
    return `could not mark ${file} as stopping (${err instanceof Error ? err.message : String(err)}): a \`switchyard stop\` run meanwhile sends a second signal, which ends the shutdown grace period`;
  }
}

/**
 * Narrows the mode of the locked file `fd` to 0600. EPERM (the file is another user's, its mode wider
 * than 0600): the file is left as it is and a warning returned; the lock holds all the same and the
 * file holds no secret (a pid, a boot id, a nonce).
 */
function narrowMode(lock: string, fd: number, writes: LockFileWrites): string | undefined {
  try {
    writes.fchmod(fd, 0o600);
    return undefined;
  } catch (e) {
    const st = fstatSync(fd);
    if ((e as NodeJS.ErrnoException).code !== "EPERM" || st.uid === process.getuid?.()) throw e;
    if ((st.mode & 0o077) === 0) return undefined; // no wider than 0600 already
    return `the lock file ${lock} belongs to another user (uid ${st.uid}), so its mode stays 0${(st.mode & 0o777).toString(8)}, not 0600; it holds no secret and locks all the same: remove it while no switchyard instance runs there, so the next start makes its own`;
  }
}

/** The holder's lock text once it has written it (it writes right after taking the lock): waits that moment. */
function readHolder(lock: string): { pid?: number; mtimeMs?: number } {
  for (const until = Date.now() + UNWRITTEN_LOCK_MS; ; Bun.sleepSync(20)) {
    const held = readLock(lock);
    if (held?.pid !== undefined || Date.now() > until) return { pid: held?.pid, mtimeMs: held?.mtimeMs };
  }
}

/** Whether the open file `fd` is still the file at `lock` (not removed, not replaced by another). */
function sameFile(fd: number, lock: string): boolean {
  try {
    const open = fstatSync(fd);
    const there = statSync(lock);
    return open.ino === there.ino && open.dev === there.dev;
  } catch {
    return false;
  }
}

/** Whether this process's claim still holds the lock file at `lock`: the same file (flock), or the same text (fallback). */
function stillMine(lock: string, mine: { fd?: number; text: string }): boolean {
  return mine.fd !== undefined ? sameFile(mine.fd, lock) : readLock(lock)?.text === mine.text;
}

/** Drops this process's claim `key` from {@link claims}, closing its descriptor (which drops the flock). */
function forget(key: string): void {
  const mine = claims.get(key);
  claims.delete(key);
  if (mine?.fd !== undefined) closeSync(mine.fd);
}

/**
 * Gives back the data directory {@link claimDataDir} claimed, when this process holds it: removes the
 * lock file if it is still the one this process holds (while still holding it), then closes it, which
 * drops the kernel's lock. Nothing when this process holds no claim of it (another app of this process
 * gave it back already).
 */
export function releaseDataDir(dataDir: string): void {
  const key = claimKey(dataDir);
  const mine = claims.get(key);
  if (!mine) return;
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  if (stillMine(lock, mine)) rmSync(lock, { force: true });
  forget(key);
}

/**
 * The URL the holder `pid` listens on, from instance.json when it names that pid and was written after
 * the lock (at `lockMtimeMs`; not a file an earlier instance of the same pid left); undefined before it listens.
 */
function listeningUrl(dataDir: string, pid: number, lockMtimeMs?: number): string | undefined {
  const file = join(dataDir, "instance.json");
  try {
    const j = JSON.parse(readFileSync(file, "utf8")) as { pid?: unknown; url?: unknown };
    if (j.pid !== pid || typeof j.url !== "string" || j.url === "") return undefined;
    return lockMtimeMs === undefined || statSync(file).mtimeMs >= lockMtimeMs ? j.url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Throws the refusal: the holder's pid ("unknown" when its lock holds none yet) and its URL once it
 * listens. `maybeStale`: the holder is only a live pid (the fallback), which may be another program's
 * now: say how to clear the lock when it is not listening.
 */
function refuse(dataDir: string, pid: number | undefined, url: string | undefined, maybeStale: boolean): never {
  const lock = join(dataDir, INSTANCE_LOCK_FILE);
  const where = url ?? `still starting; it holds ${lock}`;
  const stale = url || !maybeStale ? "" : ` (if no switchyard runs with this directory, that lock is a crashed instance's whose pid another program now has: remove ${lock})`;
  throw new Error(`another switchyard instance (pid ${pid ?? "unknown"}, ${where}) is running with the data directory ${dataDir}; stop it or use --data-dir${stale}`);
}

/**
 * A lock file's text, its pid (and boot id, and nonce: none in the earlier version's) when it holds
 * one, and when it was last written; undefined when there is none.
 */
function readLock(lock: string): { text: string; pid?: number; boot?: string; nonce?: string; mtimeMs: number } | undefined {
  try {
    const mtimeMs = statSync(lock).mtimeMs;
    const text = readFileSync(lock, "utf8");
    const m = /^([1-9]\d*)\n(?:([0-9a-f-]{36})\n)?(?:([0-9a-f]{32})\n)?$/.exec(text);
    return m ? { text, pid: Number(m[1]), ...(m[2] ? { boot: m[2] } : {}), ...(m[3] ? { nonce: m[3] } : {}), mtimeMs } : { text, mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * The fallback claim (no flock, see {@link claimDataDir}): creates `lock` exclusively with `text`; a
 * lock whose pid is no live process, of an earlier boot, or this process's pid (this process holds no
 * claim of it: an earlier process of that pid) is removed and the creation tried again.
 */
function claimExclusive(dataDir: string, lock: string, text: string): { fd?: undefined; tookOver: boolean } {
  let tookOver = false;
  for (const until = Date.now() + 10_000; ; ) {
    if (Date.now() > until) throw new Error(`cannot claim the data directory ${dataDir}: its ${INSTANCE_LOCK_FILE} stays unreadable; remove it if no switchyard instance runs there`);
    try {
      writeFileSync(lock, text, { mode: 0o600, flag: "wx" });
      return { tookOver };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const held = readLock(lock);
    if (held === undefined) continue; // removed meanwhile
    const thisBoot = held.boot === undefined || held.boot === BOOT_ID;
    if (held.pid !== undefined && held.pid !== process.pid && thisBoot && alive(held.pid)) refuse(dataDir, held.pid, listeningUrl(dataDir, held.pid), true);
    if (held.pid === undefined && Date.now() - held.mtimeMs < UNWRITTEN_LOCK_MS) {
      Bun.sleepSync(20); // created, its pid not written yet
      continue;
    }
    removeStaleLock(lock, held.text);
    tookOver = true;
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
  const id = newNonce();
  try {
    writeFileSync(file, `${id}\n`, { mode: 0o600, flag: "wx" }); // two starts at once: the first file wins
  } catch {
    const other = read();
    if (other) return other;
    writeFileSync(file, `${id}\n`, { mode: 0o600 }); // a malformed file
  }
  return read() ?? id;
}
