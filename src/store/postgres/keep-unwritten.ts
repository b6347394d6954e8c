/**
 * The rows a stop could not write to PostgreSQL, kept on disk for the next start (README "Running
 * several instances"; the last flush at a stop retries until the shutdown grace period ends, and what is
 * still unwritten then lands here instead of being lost).
 *
 * The file ({@link UNWRITTEN_FILE} in the data directory, mode 0600) is JSON lines: a header
 * `{"switchyard":…,"version":1,"at":ms}`, then one line per row, each naming the flush batch it belongs
 * to: `{"batch":id,"usage":[…]}` (a usage row as `usageParams` in ../rows.ts makes it), `{"batch":id,
 * "trace":[route id, request id, ts, JSON body]}`, `{"batch":id,"binding":[key, account id, expires at]}`,
 * `{"batch":id,"quota":{…}}` (a quota window), `{"batch":id,"keyUse":{…}}` (a key budget window's use
 * the stop could not report: `KeptKeyUse` in ../shared.ts, counted back by ./count-back-key-use.ts).
 * That is exactly what the flush would have written to the database, nothing more: no request or reply
 * body, no credential (a route trace's body is the trace the database keeps, which holds no secret).
 * The format is still version 1: a `keyUse` line is one more kind of line, which a reader from before
 * it (2026-12-06) counts as a line it cannot read: that reader writes the rows and keeps the file aside
 * (`.unreadable-MS`) for a look by hand rather than refusing the whole file as a newer format.
 *
 * Each batch keeps its flush id (table `flush_batches`, ./flush.ts): a batch that was in the air when
 * the database went away may have committed after all, and its replay with the same id then writes
 * nothing; rows that were only buffered get a new id when they are kept, so a start that writes them,
 * dies before it removes the file and starts again writes them once too (ids are kept a week).
 * No I/O beyond the file itself; functions throw Node's errors (ENOENT, EACCES, EISDIR, ENOSPC…).
 */
import { chmodSync, closeSync, copyFileSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import type { PendingBatch } from "../pending.ts";
import type { TraceParams, UsageParams } from "../rows.ts";
import type { KeptKeyUse } from "../shared.ts";
import type { QuotaWindow } from "../types.ts";

/** The file's name in the data directory. */
export const UNWRITTEN_FILE = "unwritten-rows.jsonl";

/** The format version this build writes and reads. */
const VERSION = 1;

/** A batch with its flush id (./flush.ts): what a stop keeps, and a start reads back. */
export interface IdentifiedBatch {
  id: string;
  batch: PendingBatch;
}

/** Usage rows, traces, state rows (bindings, quota windows) and key budget windows' use of some batches. */
export interface RowCounts {
  usage: number;
  traces: number;
  state: number;
  /** Key budget windows whose use a stop could not report (`PendingBatch.keyUse` entries). */
  keyUse: number;
}

/** What {@link readKept} found: the batches in the order written, and how many lines it could not read. */
export interface KeptFile {
  batches: IdentifiedBatch[];
  skippedLines: number;
}

/** Whether a batch holds anything to write. */
export function holdsAny(b: PendingBatch): boolean {
  return b.usage.length > 0 || b.traces.length > 0 || b.binds.size > 0 || b.quotas.size > 0 || b.budgets.size > 0 || (b.keyUse?.length ?? 0) > 0;
}

/** An empty batch. */
export function emptyBatch(): PendingBatch {
  return { usage: [], traces: [], binds: new Map(), quotas: new Map(), budgets: new Map() };
}

/** The rows of `batches`, counted as {@link RowCounts}. */
export function countRows(batches: readonly IdentifiedBatch[]): RowCounts {
  const n = { usage: 0, traces: 0, state: 0, keyUse: 0 };
  for (const { batch: b } of batches) {
    n.usage += b.usage.length;
    n.traces += b.traces.length;
    n.state += b.binds.size + b.quotas.size + b.budgets.size;
    n.keyUse += b.keyUse?.length ?? 0;
  }
  return n;
}

/**
 * Writes `batches` to `path` (JSON lines, module comment) in place of what it held: a new file made
 * with mode 0600 next to it, synced, then renamed over it, so a crash midway leaves the old file whole.
 * Budget windows are not written (the PostgreSQL store has none in its batches: key limits are leased).
 * @throws the file system's error; the old file is then as it was
 */
export function writeKept(path: string, batches: readonly IdentifiedBatch[], now: number): void {
  const lines = [JSON.stringify({ switchyard: "rows a stop could not write to PostgreSQL; the next start writes them", version: VERSION, at: now })];
  for (const { id, batch } of batches) {
    for (const u of batch.usage) lines.push(JSON.stringify({ batch: id, usage: u }));
    for (const t of batch.traces) lines.push(JSON.stringify({ batch: id, trace: t }));
    for (const b of batch.binds.values()) lines.push(JSON.stringify({ batch: id, binding: [b.key, b.accountId, b.expiresAt] }));
    for (const q of batch.quotas.values()) lines.push(JSON.stringify({ batch: id, quota: q }));
    for (const k of batch.keyUse ?? []) lines.push(JSON.stringify({ batch: id, keyUse: k }));
  }
  const tmp = `${path}.${process.pid}.tmp`;
  rmSync(tmp, { force: true }); // an old one would keep its mode
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, lines.join("\n") + "\n");
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Reads the batches a stop kept at `path`, in the order written; undefined when there is no such file.
 * Lines it cannot read (cut by a full disk, edited by hand) are skipped and counted.
 * @throws the file system's error (EACCES, EISDIR…); an Error for a file of a newer format
 */
export function readKept(path: string): KeptFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return undefined;
    throw err;
  }
  const byId = new Map<string, PendingBatch>();
  let skippedLines = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line);
    } catch {
      skippedLines++;
      continue;
    }
    if (!row || typeof row !== "object") {
      skippedLines++;
      continue;
    }
    if (typeof row.version === "number") {
      if (row.version > VERSION) throw new Error(`it was written by a newer switchyard (format ${row.version})`);
      continue;
    }
    const id = row.batch;
    if (typeof id !== "string" || !id) {
      skippedLines++;
      continue;
    }
    let b = byId.get(id);
    if (!b) byId.set(id, (b = emptyBatch()));
    if (Array.isArray(row.usage)) b.usage.push(row.usage as UsageParams);
    else if (Array.isArray(row.trace) && row.trace.length === 4 && typeof row.trace[0] === "string") b.traces.push(row.trace as TraceParams);
    else if (Array.isArray(row.binding) && typeof row.binding[0] === "string" && typeof row.binding[1] === "string" && Number.isFinite(row.binding[2])) {
      b.binds.set(row.binding[0], { key: row.binding[0], accountId: row.binding[1], expiresAt: row.binding[2] as number });
    } else if (row.quota && typeof row.quota === "object") {
      const q = row.quota as QuotaWindow & { updatedAt: number };
      if (typeof q.accountId !== "string" || typeof q.window !== "string" || typeof q.model !== "string" || !Number.isFinite(q.updatedAt)) skippedLines++;
      else b.quotas.set(`${q.accountId}\u0000${q.window}\u0000${q.model}`, q);
    } else if (row.keyUse && typeof row.keyUse === "object") {
      const k = keptKeyUse(row.keyUse as Record<string, unknown>);
      if (k) (b.keyUse ??= []).push(k);
      else skippedLines++;
    } else skippedLines++;
  }
  const batches = [...byId].map(([id, batch]) => ({ id, batch })).filter(({ batch: b }) => holdsAny(b));
  return { batches, skippedLines };
}

/** A `keyUse` line's entry as the file holds it, or undefined when a field is missing or not what it should be. */
function keptKeyUse(k: Record<string, unknown>): KeptKeyUse | undefined {
  const { name, windowStart, windowEnd, pending, used, reported, unpriced, instanceId } = k;
  if (typeof name !== "string" || !name || typeof instanceId !== "string" || !instanceId || typeof pending !== "boolean") return undefined;
  if (![windowStart, windowEnd, used, reported].every((v) => typeof v === "number" && Number.isFinite(v))) return undefined;
  if (unpriced !== undefined && !(typeof unpriced === "number" && Number.isFinite(unpriced))) return undefined;
  const out: KeptKeyUse = { name, windowStart: windowStart as number, windowEnd: windowEnd as number, pending, used: used as number, reported: reported as number, instanceId };
  if (unpriced !== undefined) out.unpriced = unpriced as number;
  return out;
}

/**
 * `batches` without the state rows that have lapsed by `now` (ms since the epoch): bindings past their
 * `expiresAt`, quota windows past their `resetAt`. Written back later they would only replace what
 * another instance wrote since; the rows are changed in place, batches left empty are left out. Key
 * budget use stays: whether its window has ended is judged on the database's clock when it is written.
 */
export function withoutLapsed(batches: readonly IdentifiedBatch[], now: number): IdentifiedBatch[] {
  for (const { batch: b } of batches) {
    for (const [k, bind] of b.binds) if (bind.expiresAt <= now) b.binds.delete(k);
    for (const [k, q] of b.quotas) if (typeof q.resetAt === "number" && q.resetAt <= now) b.quotas.delete(k);
  }
  return batches.filter(({ batch: b }) => holdsAny(b));
}

/** Removes the file (once every batch in it is written). Never throws for a missing file. */
export function removeKept(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Where a kept file some lines of which could not be read goes once the rest is written, instead of
 * being removed: `PATH.unreadable-MS` (MS: ms since the epoch), so those lines can still be looked at.
 */
export function unreadableName(path: string, now: number): string {
  return `${path}.unreadable-${Math.floor(now)}`;
}

/**
 * Moves the file to `to` ({@link unreadableName}; `copy`: copies it there, for a stop about to replace
 * it), mode 0600 (it holds what the database would).
 */
export function setAsideKept(path: string, to: string, copy = false): void {
  if (copy) copyFileSync(path, to);
  else renameSync(path, to);
  chmodSync(to, 0o600);
}
