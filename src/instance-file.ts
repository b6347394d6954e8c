/**
 * instance.json in the data directory (SPEC 2.2): who owns the directory (pid, URL, admin token), so
 * the CLI finds the running instance and a second one refuses to start on the same data.
 */
import { existsSync, readFileSync } from "node:fs";
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
  if (pid === undefined || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined; // no such process: a stale file
  }
  try {
    const url = (JSON.parse(readFileSync(file, "utf8")) as { url?: unknown }).url;
    return typeof url === "string" && url !== "" ? { pid, url } : { pid };
  } catch {
    return { pid };
  }
}

/**
 * One instance per data directory: the instance owns the SQLite file and instance.json (SPEC 2.2).
 * Throws when instance.json names a live process other than this one (a stale file from a crash is
 * taken over).
 */
export function assertDataDirFree(dataDir: string): void {
  const owner = liveInstance(dataDir);
  if (!owner) return;
  throw new Error(`another switchyard instance (pid ${owner.pid}${owner.url ? `, ${owner.url}` : ""}) is running with the data directory ${dataDir}; stop it or use --data-dir`);
}
