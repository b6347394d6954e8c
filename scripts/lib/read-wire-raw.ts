/**
 * The over-the-wire CPU per request of the raw pipe and of switchyard, per lane, and switchyard's
 * measured ratio to the raw pipe, read from a `scripts/bench --json` file (docs/bench/*.json).
 * scripts/bench-budget.ts sizes each lane's allowance from the raw pipe (issue 17: the ratio targets are
 * over the wire, where the raw pipe pays sockets and Bun's server, 55–80 µs per request, not in process,
 * 10–20 µs), judges the lane met or missed from the measured ratio, and charges what switchyard pays over
 * the wire beyond its in-process run (switchyard − raw, minus the in-process figure) to a row of its own.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One lane's over-the-wire figures from a bench file (CPU µs per request, medians over its rounds). */
export type WireLane = {
  /** The raw pipe's CPU µs per request (`cpuUsPerRequest.raw.median`). */
  raw: number;
  /** switchyard's CPU µs per request (`cpuUsPerRequest.switchyard.median`). */
  switchyard: number;
  /** switchyard's CPU per request ÷ the raw pipe's, the median over the run's rounds (`cpuRatioToRaw.median`). */
  ratio: number;
};

/**
 * The newest run file in `dir` by name: `YYYY-MM-DD-rN.json`, by date and then by run number as a
 * number (so r10 comes after r9). Returns the path joined to `dir`; throws when `dir` holds no such file.
 */
export function newestBenchFile(dir: string): string {
  const runs = readdirSync(dir)
    .map((f) => ({ f, m: /^(\d{4}-\d\d-\d\d)-r(\d+)\.json$/.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
    .sort((a, b) => (a.m[1] === b.m[1] ? Number(a.m[2]) - Number(b.m[2]) : a.m[1]! < b.m[1]! ? -1 : 1));
  const last = runs.at(-1);
  if (!last) throw new Error(`${dir} holds no bench run file (YYYY-MM-DD-rN.json)`);
  return join(dir, last.f);
}

type BenchJson = { throughput?: Array<{ lane?: string; mode?: string; cpuUsPerRequest?: { raw?: { median?: number }; switchyard?: { median?: number } }; cpuRatioToRaw?: { median?: number } }> };

/**
 * Each budget lane's over-the-wire figures from the bench file at `file`. A budget lane is named
 * "<scripts/bench lane> <mode>" (e.g. "messages→chat stream" is lane "messages→chat", mode "stream" of
 * the file's `throughput` list). Throws when the file is not JSON, or has no raw or switchyard CPU figure
 * or no measured ratio for a lane (runs before r11, 2026-12-02, have no `cpuRatioToRaw`).
 */
export function readWireRaw(file: string, laneNames: readonly string[]): Map<string, WireLane> {
  const bench = JSON.parse(readFileSync(file, "utf8")) as BenchJson;
  const out = new Map<string, WireLane>();
  for (const name of laneNames) {
    const cut = name.lastIndexOf(" ");
    const [lane, mode] = [name.slice(0, cut), name.slice(cut + 1)];
    const row = bench.throughput?.find((t) => t.lane === lane && t.mode === mode);
    const raw = row?.cpuUsPerRequest?.raw?.median;
    if (typeof raw !== "number" || !(raw > 0)) throw new Error(`${file} has no raw pipe CPU per request (throughput, lane "${lane}", mode "${mode}")`);
    const switchyard = row!.cpuUsPerRequest!.switchyard?.median;
    const ratio = row!.cpuRatioToRaw?.median;
    if (typeof switchyard !== "number" || !(switchyard > 0)) throw new Error(`${file} has no switchyard CPU per request (throughput, lane "${lane}", mode "${mode}")`);
    if (typeof ratio !== "number" || !(ratio > 0)) throw new Error(`${file} has no measured CPU ratio to the raw pipe (cpuRatioToRaw, lane "${lane}", mode "${mode}")`);
    out.set(name, { raw, switchyard, ratio });
  }
  return out;
}
