/**
 * instance.json in the data directory (SPEC 2.2): who owns the directory (pid, URL, admin token), so
 * the CLI finds the running instance and a second one refuses to start on the same data.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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
