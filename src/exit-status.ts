/**
 * last-exit.json in the data directory: the exit status a stopped instance leaves for `switchyard stop`
 * (src/cli/stop.ts), which is not the instance's parent and so cannot wait for its exit code. Written
 * by the instance just before it exits at the end of a stop (src/main.ts), removed by the next start of
 * the directory once it holds the lock (src/app.ts), and read only for the instance it names (its pid
 * and its start's nonce, the one in its instance.json), so a file another instance left is never
 * reported as this one's. An instance that exits without a stop (killed, crashed) leaves none.
 */
import { renameSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The file's name in the data directory. */
export const EXIT_STATUS_FILE = "last-exit.json";

/**
 * What the file holds: the instance's `pid` and `nonce` (its start's, as in its instance.json), its
 * `exitCode`, the `time` it was written (ms since the epoch, just before the exit) and, for a code
 * other than 0, `why` (one sentence: what made the stop fail).
 */
export interface ExitStatus {
  pid: number;
  nonce: string;
  exitCode: number;
  time: number;
  why?: string;
}

/**
 * Writes `status` into `dataDir`'s {@link EXIT_STATUS_FILE} (mode 0600, written beside it and renamed, so
 * a reader never sees half of it). Never throws: a directory that cannot be written leaves no file, and
 * `stop` then says it found none.
 */
export function leaveExitStatus(dataDir: string, status: ExitStatus): void {
  const file = join(dataDir, EXIT_STATUS_FILE);
  const tmp = `${file}.${status.nonce}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(status) + "\n", { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing to clean
    }
  }
}

/** Removes `dataDir`'s {@link EXIT_STATUS_FILE} (a start's: the previous instance's status is not this one's). Never throws. */
export function clearExitStatus(dataDir: string): void {
  try {
    rmSync(join(dataDir, EXIT_STATUS_FILE), { force: true });
  } catch {
    // not a file (a directory of that name): it is never read as a status
  }
}

/**
 * The exit status the instance of `pid` (and, when known, of the start `nonce`) left in `dataDir`;
 * undefined when there is none, it is unreadable, or it names another instance (an earlier one's).
 */
export function readExitStatus(dataDir: string, pid: number, nonce: string | undefined): ExitStatus | undefined {
  try {
    const j = JSON.parse(readFileSync(join(dataDir, EXIT_STATUS_FILE), "utf8")) as Partial<ExitStatus>;
    if (j.pid !== pid || (nonce !== undefined && j.nonce !== nonce)) return undefined;
    if (typeof j.exitCode !== "number" || !Number.isInteger(j.exitCode) || typeof j.time !== "number") return undefined;
    return { pid, nonce: String(j.nonce), exitCode: j.exitCode, time: j.time, ...(typeof j.why === "string" ? { why: j.why } : {}) };
  } catch {
    return undefined;
  }
}
