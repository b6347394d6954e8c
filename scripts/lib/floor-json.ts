/**
 * The JSON file of a scripts/bench-floor.ts run (`--json FILE`; kept in docs/bench/ as
 * `YYYY-MM-DD-floor-HHMM.json`) and how scripts/bench-budget.ts finds and reads it: the over-the-wire CPU
 * per request of the raw pipe, of each rung of the floor in Bun and of switchyard, per lane, from which
 * the budget splits its row "over the wire, not seen in process" into what the floor's top rung pays too
 * and what is switchyard's own (issue 17).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One server's figures on one lane: medians over the run's rounds. */
export type FloorCell = {
  /** CPU µs per request (the server's process, /proc/PID/stat, over its load runs ÷ the requests served). */
  cpuUs: number;
  /** The CPU per request ÷ the raw pipe's of the same round and lane, the median over rounds (1 for the raw pipe). */
  ratioToRaw: number;
};

/** One lane (column) of a floor run. */
export type FloorLane = {
  /** The lane as scripts/bench-budget.ts names it, e.g. "chat→chat stream". */
  name: string;
  /** "native" or "translated" (scripts/bench-lanes.ts). */
  kind: "native" | "translated";
  /** The key of the lane's top rung in `servers`: "6" on a translated lane, else "5". */
  topRung: string;
  /** Keyed "0" (the raw pipe) … "6" (rungs; "6" on translated lanes only) and "switchyard". */
  servers: Record<string, FloorCell>;
};

/** What `scripts/bench-floor.ts --json FILE` writes. */
export type FloorJson = {
  /** ISO time the run ended. */
  when: string;
  /** `git rev-parse HEAD` of the checkout that ran it (null outside a git checkout). */
  commit: string | null;
  /** The command line, e.g. "bun scripts/bench-floor.ts --json docs/bench/2026-12-06-floor-1512.json". */
  command: string;
  machine: { cores: number; bun: string; loadClient: string };
  rounds: number;
  seconds: number;
  /** Load errors over the whole run (non-2xx answers and broken connections the load client counted). */
  loadErrors: number;
  lanes: FloorLane[];
};

/** The file name a floor run of `date` is kept under in docs/bench/: `YYYY-MM-DD-floor-HHMM.json` (UTC). */
export function floorFileName(date: Date): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)}-floor-${iso.slice(11, 13)}${iso.slice(14, 16)}.json`;
}

/** The newest `YYYY-MM-DD-floor-HHMM.json` in `dir` by name, joined to `dir`; undefined when there is none. */
export function newestFloorFile(dir: string): string | undefined {
  const last = readdirSync(dir).filter((f) => /^\d{4}-\d\d-\d\d-floor-\d{4}\.json$/.test(f)).sort().at(-1);
  return last ? join(dir, last) : undefined;
}

/** Every `YYYY-MM-DD-floor-HHMM.json` in `dir`, joined to `dir`, newest first (by name). */
export function floorFilesNewestFirst(dir: string): string[] {
  return readdirSync(dir).filter((f) => /^\d{4}-\d\d-\d\d-floor-\d{4}\.json$/.test(f)).sort().reverse().map((f) => join(dir, f));
}

/** A floor lane with the run it was taken from (see {@link mergeFloorRuns}). */
export type SourcedFloorLane = FloorLane & { file: string; when: string };

/**
 * Each lane from the newest of `files` (newest first) that ran it: a run of a few lanes
 * (`scripts/bench-floor.ts --lanes`) adds or renews those lanes without losing the others of an older full
 * run. Throws as {@link readFloorJson} does.
 */
export function mergeFloorRuns(files: readonly string[]): SourcedFloorLane[] {
  const lanes: SourcedFloorLane[] = [];
  for (const file of files) {
    const run = readFloorJson(file);
    for (const l of run.lanes) if (!lanes.some((m) => m.name === l.name)) lanes.push({ ...l, file, when: run.when });
  }
  return lanes;
}

/**
 * Reads a floor run's JSON. Throws when the file is not JSON or a lane lacks the raw pipe's or its top
 * rung's CPU figure.
 */
export function readFloorJson(file: string): FloorJson {
  const j = JSON.parse(readFileSync(file, "utf8")) as FloorJson;
  if (!Array.isArray(j.lanes)) throw new Error(`${file} is not a scripts/bench-floor.ts --json file (no lanes)`);
  for (const l of j.lanes) {
    for (const key of ["0", l.topRung]) {
      const c = l.servers?.[key];
      if (typeof c?.cpuUs !== "number" || !(c.cpuUs > 0)) throw new Error(`${file}: lane "${l.name}" has no CPU per request for server "${key}"`);
    }
  }
  return j;
}

/**
 * Why a lane's "over the wire, not seen in process" row is printed whole though a floor run was given
 * (scripts/bench-budget.ts): the floor file has no such lane, or it has but this run did not measure the
 * lane's floor top rung in process (`floorInMeasured` false). Undefined when it can be split.
 */
export function unsplitWhy(inFloorFile: boolean, floorInMeasured: boolean): "not in that run" | "its in-process floor not measured" | undefined {
  if (!inFloorFile) return "not in that run";
  return floorInMeasured ? undefined : "its in-process floor not measured";
}

/**
 * The unsplit lanes named by why (bench-budget's first line), grouped in the order first met:
 * "a, b (not in that run), c (its in-process floor not measured)"; "" when every lane is split.
 */
export function unsplitLanes(lanes: readonly { name: string; why: ReturnType<typeof unsplitWhy> }[]): string {
  const groups = new Map<string, string[]>();
  for (const l of lanes) if (l.why) groups.set(l.why, [...(groups.get(l.why) ?? []), l.name]);
  return [...groups].map(([why, names]) => `${names.join(", ")} (${why})`).join(", ");
}

/** The whole row's label part (bench-budget's table): which reasons left lanes unsplit, from {@link unsplitWhy}. */
export function unsplitRowNote(whys: readonly ReturnType<typeof unsplitWhy>[]): string {
  const text: Record<NonNullable<ReturnType<typeof unsplitWhy>>, string> = {
    "not in that run": "the floor file has no such lane",
    "its in-process floor not measured": "the lane's floor top rung was not measured in process",
  };
  return [...new Set(whys.filter((w) => w !== undefined))].map((w) => text[w]).join("; or ");
}
