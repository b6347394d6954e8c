/**
 * What `switchyard setup` keeps so that `switchyard setup CLI --undo` can put a CLI's settings back as
 * they were before the first setup, and the undo itself.
 *
 * Beside the files it writes (in `~/.claude`, `$CODEX_HOME` or `~/.codex`, `~/.gemini`) setup keeps
 * `switchyard-setup.json` ({@link SetupRecord}): per file, whether it existed before the first setup
 * (then its copy `<file>.switchyard-original`, made once and never overwritten by later runs) or setup
 * created it, and the SHA-256 of what setup last wrote. Later runs still copy the file to
 * `<file>.switchyard-backup-<ms>` before they change it.
 *
 * Undo, per file, decided from its bytes now: unchanged since setup last wrote it → the original is
 * moved back (byte for byte, with the mode it had before the first setup), or the file removed when
 * setup created it; the same bytes as the original (the user copied it back) → the original's copy is
 * removed and the mode put back; changed since (a user edit, noticed at undo or by a later setup run
 * that wrote over it) → left as it is, with a line saying how to go back by hand (copy the original over it,
 * or remove it, or remove setup's settings, named); removed since → the original is put back. A file
 * put back loses the later runs' backups of it too (each a state setup wrote, with the client key, or
 * the original); a backup that may hold an edit of the user's is kept and named.
 * The record keeps what was left, and goes when nothing is. A file setup created that a file left as
 * it is still names (Codex's model catalog, named by its `config.toml`) is left too. A file whose
 * original is unknown (it already pointed at the gateway) is left, saying so; an original put back that
 * itself sets a gateway URL (an older switchyard's run, a by-hand edit) is named, and undo is not done.
 */
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { tomlStatements } from "./toml-edit.ts";

/** The record's file name, in the directory of the files setup writes for a CLI. */
export const SETUP_RECORD_FILE = "switchyard-setup.json";

/** What the record says of one file (named by its name in the record's directory). */
export interface SetupRecordEntry {
  /** The copy of the file as it was before the first setup (a name in the same directory); null: setup created it. */
  original: string | null;
  /** SHA-256 (hex) of what setup last wrote to the file. */
  written: string;
  /**
   * What setup last wrote holds a user edit: a later setup run found the file changed since setup had
   * written it (and not put back as it was before the first setup), so it wrote over the edit, keeping
   * it. Decided again by each run: cleared when the run finds the original's bytes (the user copied it
   * back) or no file; kept when it finds what setup last wrote. Undo then leaves a file that still
   * holds what setup last wrote (the edit would be lost).
   */
  edited?: boolean;
  /**
   * The file's permission bits before the first setup (e.g. 0o644 = 420), put back by undo with the
   * original (setup's own writes are 0600: they hold the key). Absent: setup created the file, or a
   * switchyard from before 2026-12-06 recorded it (undo then leaves it 0600).
   */
  mode?: number;
  /** The settings setup wrote in the file (`env.ANTHROPIC_BASE_URL`, `[model_providers.switchyard]`, …), for removing them by hand. */
  keys: string[];
  /**
   * The file already pointed at the gateway when setup first recorded it (an older switchyard that kept
   * no record and no backup, or a by-hand edit): what it was before is unknown, so undo leaves it.
   */
  originalUnknown?: boolean;
  /**
   * The backups later runs made (`<file>.switchyard-backup-<ms>`, names in the same directory) of a
   * state setup wrote, or of the original put back: undo removes them with the file put back (unless
   * `edited`). A backup of a file the user had changed is not listed: undo keeps and names it.
   */
  backups?: string[];
}

/** `switchyard-setup.json`. */
export interface SetupRecord {
  about: string;
  files: Record<string, SetupRecordEntry>;
  /**
   * The directories setup created for its files (absolute paths, deepest first: the record's own
   * directory, then each parent it had to make too), e.g. `~/.gemini` on a machine where Gemini CLI
   * never ran. Undo removes each one that is empty once its files are gone (until 2026-12-05 they
   * stayed, empty). Absent: setup made none (or an earlier version ran first).
   */
  createdDirs?: string[];
}

const ABOUT = "written by switchyard setup: what it changed here, so that switchyard setup <cli> --undo can put it back";

/** SHA-256 (hex) of a file's text. */
export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/** The record in `dir`; an empty one when there is none (or it cannot be read). */
export function readRecord(dir: string): SetupRecord {
  try {
    const r = JSON.parse(readFileSync(join(dir, SETUP_RECORD_FILE), "utf8")) as SetupRecord;
    if (r && typeof r.files === "object" && r.files !== null) return r;
  } catch {
    // none yet
  }
  return { about: ABOUT, files: {} };
}

/** Writes the record to `dir`, or removes it when it holds no file. */
export function writeRecord(dir: string, r: SetupRecord): void {
  const path = join(dir, SETUP_RECORD_FILE);
  if (Object.keys(r.files).length === 0) rmSync(path, { force: true });
  else writeFileSync(path, JSON.stringify({ about: ABOUT, files: r.files, ...(r.createdDirs?.length ? { createdDirs: r.createdDirs } : {}) }, null, 2) + "\n", { mode: 0o600 });
}

/** A name in `dir` starting with `name` that no file has (`name`, else `name-<ms>`). */
function freeName(dir: string, name: string, now: number): string {
  return existsSync(join(dir, name)) ? `${name}-${now}` : name;
}

/**
 * The settings of setup's that point a CLI at a gateway found in `text` (a `settings.json`,
 * `config.toml` or `.env`), by name: `[model_providers.switchyard]`, `env.ANTHROPIC_BASE_URL`,
 * `GOOGLE_GEMINI_BASE_URL`. With `after` (what setup writes), a URL counts only when it is the one
 * setup writes there; without, every one found counts, with its value.
 */
export function gatewaySettingsIn(text: string, after?: string): string[] {
  const found: string[] = [];
  if (hasSwitchyardTable(text)) found.push("[model_providers.switchyard]");
  const urls: Array<[string, RegExp]> = [
    ["env.ANTHROPIC_BASE_URL", /"ANTHROPIC_BASE_URL"\s*:\s*"([^"]*)"/],
    ["GOOGLE_GEMINI_BASE_URL", /^\s*(?:export\s+)?GOOGLE_GEMINI_BASE_URL\s*=\s*["']?([^"'\n]*)/m],
  ];
  for (const [key, re] of urls) {
    const v = re.exec(text)?.[1];
    if (v === undefined) continue;
    if (after === undefined) found.push(`${key} = ${v}`);
    else if (re.exec(after)?.[1] === v) found.push(key);
  }
  return found;
}

/**
 * Whether `text` read as TOML (src/cli/toml-edit.ts) has a `[model_providers.switchyard]` table header,
 * however quoted or spaced; a line inside a multi-line string that reads like one does not count. Text
 * that is not TOML (a JSON or .env file) is looked at line by line.
 */
function hasSwitchyardTable(text: string): boolean {
  try {
    return tomlStatements(text).some((s) => s.kind === "table" && s.key?.length === 2 && s.key[0] === "model_providers" && s.key[1] === "switchyard");
  } catch {
    return /^\s*\[\s*model_providers\.switchyard\s*\]/m.test(text);
  }
}

/** What writing one file did: the backup made (and whether it is the original), or that setup created the file. */
export interface WriteOutcome {
  backup?: string;
  original?: boolean;
  /** The file already pointed at the gateway with no backup from before (see {@link SetupRecordEntry.originalUnknown}). */
  pointedAlready?: boolean;
  created?: boolean;
}

/**
 * Writes `after` to `path` for a setup run, keeping the record of `path`'s directory: before the first
 * setup of the file, a file that exists is copied to `<file>.switchyard-original` (or that name with
 * `-<ms>` when such a file is already there: nothing is overwritten); later, to
 * `<file>.switchyard-backup-<ms>`; a file that differs both from what setup last wrote and from the
 * original is marked edited, and its backup (holding the edit) is not listed; a file equal to the
 * original, or gone, is not edited any more (see {@link SetupRecordEntry.edited}). The first run
 * records the mode of a file that exists ({@link SetupRecordEntry.mode}).
 * A file with no record but backups from an older switchyard (`<file>.switchyard-backup-<ms>`, no
 * record): the oldest of them becomes the original (the file before that switchyard's first run); the
 * others and a copy of the file as it is now stay on disk, not listed as later backups (they may hold
 * the user's edits between those runs, so --undo does not remove them). A file with neither that already holds
 * setup's gateway settings ({@link gatewaySettingsIn}) is marked `originalUnknown`. `madeDir`: the
 * first directory this run created for `path` (what `mkdirSync(…, {recursive: true})` returns): it and
 * the directories below it down to `path`'s are recorded as setup's ({@link SetupRecord.createdDirs}).
 */
export function writeRecorded(path: string, before: string | undefined, after: string, keys: string[], now: number, madeDir?: string): WriteOutcome {
  const dir = dirname(path);
  const name = basename(path);
  const record = readRecord(dir);
  if (madeDir !== undefined) {
    const made: string[] = [];
    for (let d = dir; made.length < 64; d = dirname(d)) {
      made.push(d);
      if (d === madeDir || dirname(d) === d) break;
    }
    record.createdDirs = [...new Set([...(record.createdDirs ?? []), ...made])];
  }
  let entry = record.files[name];
  const out: WriteOutcome = {};
  if (entry === undefined) {
    const mode = before !== undefined ? statSync(path).mode & 0o7777 : undefined;
    let original: string | null = null;
    let originalUnknown = false;
    // an older switchyard kept only <file>.switchyard-backup-<ms>: the oldest is the file before its first run
    const older = laterBackups(dir, name);
    if (before !== undefined && older.length > 0) {
      original = freeName(dir, `${name}.switchyard-original`, now);
      privateCopy(older[0]!, join(dir, original));
      rmSync(older[0]!);
      // the rest, and the file as it is now (kept too), may hold the user's own edits between the older
      // switchyard's runs: they are not listed as later backups, so --undo leaves them on disk
      privateCopy(path, `${path}.switchyard-backup-${now}`);
      out.backup = join(dir, original);
      out.original = true;
    } else if (before !== undefined) {
      original = freeName(dir, `${name}.switchyard-original`, now);
      privateCopy(path, join(dir, original));
      out.backup = join(dir, original);
      out.original = true;
      originalUnknown = gatewaySettingsIn(before, after).length > 0;
    } else out.created = true;
    entry = { original, written: "", keys: [], ...(mode !== undefined ? { mode } : {}) };
    if (originalUnknown) entry.originalUnknown = out.pointedAlready = true;
  } else if (before === undefined) {
    delete entry.edited; // the file was gone: what setup writes now holds no edit
  } else {
    out.backup = `${path}.switchyard-backup-${now}`;
    privateCopy(path, out.backup);
    const asBefore = entry.original !== null && sameBytes(path, join(dir, entry.original));
    if (asBefore) delete entry.edited; // the user put the original back: setup writes over it afresh
    else if (sha256(before) !== entry.written) entry.edited = true; // an edit: its backup stays off the list
    if (asBefore || sha256(before) === entry.written) entry.backups = [...(entry.backups ?? []), basename(out.backup)];
  }
  // `mode` applies only to a file the write creates: an existing file (0644 as editors and the CLIs make
  // them) is made private before the client key goes into it, so no other local user can read it.
  if (before !== undefined) chmodSync(path, 0o600);
  writeFileSync(path, after, { mode: 0o600 });
  makeCopiesPrivate(dir, name);
  entry.written = sha256(after);
  entry.keys = [...new Set([...entry.keys, ...keys])];
  record.files[name] = entry;
  writeRecord(dir, record);
  return out;
}

/** Whether the files `a` and `b` both exist and hold the same bytes. */
function sameBytes(a: string, b: string): boolean {
  try {
    return readFileSync(a).equals(readFileSync(b));
  } catch {
    return false;
  }
}

/** Copies `from` to `to` readable by its owner alone (`copyFileSync` copies the mode: a 0644 file holding a key stayed 0644). */
function privateCopy(from: string, to: string): void {
  copyFileSync(from, to);
  chmodSync(to, 0o600);
}

/**
 * Makes every copy setup keeps of `name` in `dir` (`<name>.switchyard-original`, `…-backup-<ms>`, also
 * those an older switchyard left at 0644) readable by its owner alone: they may hold an earlier key.
 */
function makeCopiesPrivate(dir: string, name: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.startsWith(`${name}.switchyard-`)) continue;
    try {
      chmodSync(join(dir, n), 0o600);
    } catch {
      // gone meanwhile, or not ours to change: nothing to keep private
    }
  }
}

/** The outcome of an undo: the lines to print, and whether every file is back as it was. */
export interface UndoResult {
  lines: string[];
  done: boolean;
}

/** The later runs' backups of `name` in `dir` (`<name>.switchyard-backup-<ms>`), oldest first. */
function laterBackups(dir: string, name: string): string[] {
  const prefix = `${name}.switchyard-backup-`;
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
  return names.sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length))).map((n) => join(dir, n));
}

/**
 * `switchyard setup CLI --undo` for the CLI whose files live in `dir` (`cli` names it in the lines):
 * see the module's comment. With `dryRun`, says what it would do and changes nothing.
 */
export function undoSetup(cli: string, dir: string, dryRun: boolean): UndoResult {
  const record = readRecord(dir);
  const names = Object.keys(record.files);
  const lines: string[] = [];
  if (names.length === 0) {
    // an older switchyard kept only <file>.switchyard-backup-<ms> and no record
    const older = existsSync(dir) ? readdirSync(dir).filter((n) => n.includes(".switchyard-backup-")) : [];
    if (older.length === 0) return { lines: [`nothing to undo: switchyard setup has not changed ${cli}'s settings (no ${join(dir, SETUP_RECORD_FILE)})`], done: true };
    const files = [...new Set(older.map((n) => n.slice(0, n.indexOf(".switchyard-backup-"))))];
    lines.push(`switchyard setup has no record of what it changed in ${dir} (an older switchyard wrote these settings), so --undo changes nothing there. Its backups, oldest first for each file:`);
    for (const f of files) for (const b of laterBackups(dir, f)) lines.push(`  ${b}`);
    lines.push(`the oldest backup of a file is that file before the first of those setup runs: copy it over the file (cp BACKUP ${join(dir, "FILE")}); a file with no backup was created by setup: remove it`);
    return { lines, done: false };
  }
  const will = (now: string, later: string) => (dryRun ? later : now);
  const states = new Map(names.map((n) => [n, fileState(dir, n, record.files[n]!)]));
  const left = new Set(names.filter((n) => ["unknown", "originalGone", "changed"].includes(states.get(n)!)));
  const restored: string[] = [];
  /** Paths undo removes (or, in a dry run, would remove): the files setup created, the originals moved back, the backups. */
  const gone = new Set<string>([join(dir, SETUP_RECORD_FILE)]);
  for (const name of names) {
    const entry = record.files[name]!;
    const path = join(dir, name);
    const current = existsSync(path) ? readFileSync(path, "utf8") : undefined;
    const original = entry.original === null ? null : join(dir, entry.original);
    const keys = entry.keys.join(", ");
    const state = states.get(name)!;
    if (state === "unknown") {
      // the copy of the file as setup first found it (settings written by hand, e.g. README's Codex table with its env_key) is named: it may be what the user wants back
      const found = original !== null && existsSync(original) ? `; or, to have that file back as setup first found it, copy ${original} over it (cp ${original} ${path})` : "";
      lines.push(`${path} already pointed at the gateway when switchyard setup first kept a record of it (an older switchyard with no backup, or an edit by hand), so what it was before is unknown and --undo leaves it as it is: remove setup's settings from it by hand: ${keys}${found}`);
      continue;
    }
    // a file undo leaves still names this one (Codex's config.toml its model catalog): removing it would leave the CLI pointing at a file that is gone
    const namedBy = [...left].filter((other) => other !== name && existsSync(join(dir, other)) && readFileSync(join(dir, other), "utf8").includes(path));
    if (original === null && current !== undefined && !left.has(name) && namedBy.length > 0) {
      left.add(name);
      lines.push(`${path} was created by switchyard setup, but ${namedBy.map((n) => join(dir, n)).join(", ")}, which --undo leaves as it is, still names it, so --undo leaves it too: remove it by hand (rm ${path}) once you have removed setup's settings from ${namedBy.map((n) => join(dir, n)).join(", ")}`);
      continue;
    }
    if (state === "originalGone") {
      lines.push(`${path}: its copy from before the first setup (${original}) is gone, so --undo leaves the file as it is; remove setup's settings from it by hand: ${keys}`);
      continue;
    }
    if (state === "changed") {
      lines.push(
        original !== null
          ? `${path} changed since switchyard setup wrote it, so --undo leaves it as it is (your edits stay): to go back to the file as it was before the first setup, copy ${original} over it (cp ${original} ${path}), or remove setup's settings from it: ${keys}`
          : `${path} was created by switchyard setup and changed since, so --undo leaves it as it is (your edits stay): remove it by hand (rm ${path}) once you have kept what you added, or remove setup's settings from it: ${keys}`,
      );
      continue;
    }
    const modeNote = original !== null && entry.mode === undefined ? ` (the switchyard that first set it up did not record its mode: it stays 0600, readable by you alone)` : "";
    if (original !== null && state === "asBefore") {
      // the user put the original back (what the refusal above says to do): nothing to restore but the mode
      gone.add(original);
      if (!dryRun) {
        rmSync(original);
        restoreMode(path, entry);
      }
      restored.push(path);
      lines.push(`${path} is as it was before the first setup already (the same bytes as ${original}): ${will("removed", "would remove")} that copy${modeNote}`);
    } else if (original !== null) {
      gone.add(original);
      if (!dryRun) {
        renameSync(original, path);
        restoreMode(path, entry);
      }
      restored.push(dryRun ? original : path);
      lines.push(`${will("restored", "would restore")} ${path} as it was before the first setup (from ${original})${modeNote}`);
    } else if (current !== undefined) {
      gone.add(path);
      if (!dryRun) rmSync(path);
      lines.push(`${will("removed", "would remove")} ${path} (switchyard setup created it)`);
    } else lines.push(`${path}: already gone (switchyard setup had created it)`);
    // each listed backup is a state setup wrote (it holds the client key) or the original: gone with the
    // file, unless what setup last wrote held an edit of the user's (then so may they)
    const later = entry.edited ? [] : (entry.backups ?? []).map((b) => join(dir, b)).filter((b) => existsSync(b));
    for (const b of later) gone.add(b);
    if (later.length > 0) {
      if (!dryRun) for (const b of later) rmSync(b);
      lines.push(`  ${will("removed", "would remove")} the backups later setup runs made of it (each a state setup wrote, or the file as it was before the first setup): ${later.join(", ")}`);
    }
    // an older switchyard's backups (and the copy of the file made when this version first recorded it),
    // and a later run's backup of the file the user had changed, may hold the user's own edits: left, and named
    const kept = laterBackups(dir, name).filter((b) => !later.includes(b));
    if (kept.length > 0) lines.push(`  kept (backups of it that may hold your own edits: an older switchyard's, or a setup run's of the file as you had changed it; remove them when you no longer need them): ${kept.join(", ")}`);
    delete record.files[name];
  }
  const leftCount = Object.keys(record.files).length;
  if (!dryRun) writeRecord(dir, record);
  if (leftCount === 0) lines.push(...removeCreatedDirs(record, gone, dryRun));
  // a file from before the first setup may point at the gateway itself (an older switchyard's run, a by-hand edit)
  const still = restored.flatMap((p) => gatewaySettingsIn(readFileSync(p, "utf8")).map((k) => `${p} sets ${k}`));
  if (leftCount === 0 && still.length === 0) lines.push(dryRun ? `dry run: nothing was changed; --undo would put ${cli}'s settings back as they were before the first switchyard setup` : `${cli}'s settings are back as they were before the first switchyard setup: it no longer points at the gateway`);
  else if (leftCount === 0) lines.push(`${cli}'s settings ${dryRun ? "would be" : "are"} back as they were before the first switchyard setup${dryRun ? " (dry run: nothing was changed)" : ""}, but they already pointed at the gateway then: ${still.join("; ")}; remove that by hand for ${cli} to stop using the gateway`);
  else lines.push(`${leftCount} of ${names.length} files left as they are (above)${dryRun ? "; dry run: nothing was changed" : `: ${cli} may still point at the gateway until you change them`}`);
  return { lines, done: leftCount === 0 && still.length === 0 };
}

/**
 * What undo finds of one recorded file, from its bytes now: `unknown` (its original already pointed at
 * the gateway), `originalGone` (its copy from before the first setup is missing), `gone` (no file),
 * `asBefore` (the same bytes as its original: the user put it back), `asWritten` (what setup last
 * wrote, holding no edit of the user's: see {@link SetupRecordEntry.edited}), else `changed`.
 */
function fileState(dir: string, name: string, entry: SetupRecordEntry): "unknown" | "originalGone" | "gone" | "asBefore" | "asWritten" | "changed" {
  const path = join(dir, name);
  const original = entry.original === null ? null : join(dir, entry.original);
  if (entry.originalUnknown) return "unknown";
  if (original !== null && !existsSync(original)) return "originalGone";
  if (!existsSync(path)) return "gone";
  if (original !== null && sameBytes(path, original)) return "asBefore";
  return !entry.edited && sha256(readFileSync(path, "utf8")) === entry.written ? "asWritten" : "changed";
}

/** Gives `path` back the mode it had before the first setup, when the record has it. */
function restoreMode(path: string, entry: SetupRecordEntry): void {
  if (typeof entry.mode === "number" && Number.isInteger(entry.mode)) chmodSync(path, entry.mode & 0o7777);
}

/**
 * After an undo that left no file: removes (or in a dry run, says it would remove) each directory
 * setup created ({@link SetupRecord.createdDirs}, deepest first) that is empty once `gone` (the paths
 * the undo removed or would remove) are, and names one that still holds something (the CLI's own files:
 * kept). The lines to print.
 */
function removeCreatedDirs(record: SetupRecord, gone: Set<string>, dryRun: boolean): string[] {
  const lines: string[] = [];
  for (const d of record.createdDirs ?? []) {
    let entries: string[];
    try {
      entries = readdirSync(d).filter((n) => !gone.has(join(d, n)));
    } catch {
      continue; // gone already
    }
    if (entries.length > 0) {
      lines.push(`kept ${d}, which switchyard setup created: it holds other files now (${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", …" : ""})`);
      break; // its parents are not empty either
    }
    if (!dryRun) rmdirSync(d);
    gone.add(d);
    lines.push(`${dryRun ? "would remove" : "removed"} the directory ${d} (switchyard setup created it, and it is empty now)`);
  }
  return lines;
}
