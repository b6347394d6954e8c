#!/usr/bin/env bun
/**
 * The floor in Bun (issue 17): what the work the SPEC makes mandatory for a gateway in the byte path
 * costs in Bun itself, as a ladder of minimal servers, each adding ONE primitive to the raw pipe, next to
 * switchyard on the same lanes in the same run. Where switchyard misses the 2× / 3× CPU targets, the
 * ladder says how much of the miss any Bun gateway that keeps the SPEC's behaviours would pay too, and
 * how much is switchyard's own code.
 *
 * Rungs (cumulative; the servers are scripts/lib/floor-server.ts, whose doc has the table with the SPEC
 * rule each stands for):
 *   0 raw pipe: scripts/bench-pipe.ts itself (`fetch` → `new Response(upstream.body)`)
 *   1 + guard and routing inputs: peer address, body read, `JSON.parse`, model and stream read, the
 *       client's bytes forwarded (Chat streams: `include_usage` spliced in)   G-1, G-3, G-4, R-2, F-3
 *   2 + executor call: credential header, an AbortController per request wired to the client's signal,
 *       a header timer set and cleared                                           6.4, 6.3, R-7
 *   3 + the reply through JS: first chunk peeked, what already arrived taken at once (a stream already
 *       ended goes out whole), else a pull ReadableStream; every chunk seen (usage and error
 *       searches, usage parsed), idle timer per chunk, in-band error on a broken stream; JSON
 *       replies read and parsed for usage, answered as bytes                     R-8, R-9, 6.4, O-1
 *   4 + bookkeeping: request and route ids in the headers, usage row and route trace into bun:sqlite
 *       (one transaction per 100 ms), counter and histogram, one JSON log line to a file
 *                                                                                2.4, O-1…O-4, D-1
 *   5 + Elysia instead of bare Bun.serve (the stack's framework)
 *   6 + the least translation (translated lane only): request rebuilt, each SSE event parsed and
 *       re-encoded                                                               F-2, R-5, R-9
 * and switchyard itself (`bun src/main.ts start`, as scripts/bench starts it).
 *
 * Each server is its own process (CPU from /proc/PID/stat over a load run, divided by the requests it
 * served); the load is `wrk -t1 -c32` when installed, else the Bun load client of scripts/bench; the
 * upstream is scripts/bench-upstream.ts. Rounds are interleaved (the order of the servers rotates per
 * round and lane); a cell is the median over rounds of the CPU µs per request and of its ratio to the raw
 * pipe of the same round and lane.
 *
 * Lanes (columns): the native lanes scripts/bench judges against 2× (chat→chat, messages→messages and
 * gemini→gemini, JSON and stream) and messages→chat stream (translated; rung 6 translates Messages to
 * Chat only, so the other translated lanes have no floor yet).
 *
 * Usage: bun scripts/bench-floor.ts [--smoke] [--rounds N] [--seconds N] [--lanes A,B] [--write] [--json FILE]
 *   --smoke: one 1 s run per server and lane (proves it runs; figures mean nothing; CI's mode,
 *            test/scripts/bench-floor.test.ts)
 *   --lanes: only these columns, named as the table names them ("gemini→gemini stream,messages→messages json");
 *            not with --write (the doc's table keeps every lane). A subset's --json file is not one to keep
 *            in docs/bench/: scripts/bench-budget.ts reads the newest there, and the lanes it lacks would lose
 *            their split
 *   --write: the table and its stamp between the bench-floor markers of docs/performance.md
 *   --json FILE: the run's figures as JSON (scripts/lib/floor-json.ts `FloorJson`: per lane, CPU µs per
 *            request and ratio to the raw pipe of every server, medians; when, commit, command). A real
 *            run's file is kept as docs/bench/YYYY-MM-DD-floor-HHMM.json (`floorFileName`), where
 *            scripts/bench-budget.ts looks for the newest to split its row "over the wire, not seen in process".
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVICE_ENV } from "../src/cli/service.ts";
import { benchLanes, type Lane, type Mode } from "./bench-lanes.ts";
import { loadBun, loadWrk, timedRequest, WRK } from "./bench-load.ts";
import { cpuUs, median, type Proc, startPipe, startScript, startSwitchyard, startUpstream, stopProc } from "./lib/bench-procs.ts";
import { TOP_RUNG } from "./lib/floor-server.ts";
import type { FloorJson } from "./lib/floor-json.ts";

const ROOT = join(import.meta.dir, "..");
const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const SMOKE = argv.includes("--smoke");
const WRITE = argv.includes("--write");
const JSON_FILE = opt("--json");
if (argv.includes("--json") && (!JSON_FILE || JSON_FILE.startsWith("--"))) throw new Error("--json needs a file, e.g. docs/bench/2026-12-06-floor-1512.json");
const ROUNDS = Number(opt("--rounds") ?? (SMOKE ? 1 : 5));
const SECONDS = Number(opt("--seconds") ?? (SMOKE ? 1 : 3));
const DOC = join(ROOT, "docs", "performance.md");
const MARKS = ["<!-- bench-floor:start -->", "<!-- bench-floor:end -->"] as const;

/** A server of the ladder (rung 0–6) or switchyard; `what` is the row's label. */
interface Target {
  key: string;
  what: string;
  /** Translated lanes only (rung 6). */
  translatedOnly?: boolean;
}
/** The rows of the table, in order: rung → what it adds (cumulative), then switchyard. */
const ROW_LABELS: Record<string, string> = {
  0: "0 raw pipe (scripts/bench-pipe.ts)",
  1: "1 + body read, JSON.parse, model/stream read (guard, routing)",
  2: "2 + AbortController per request, header timer (executor)",
  3: "3 + reply read in JS: peek, tap, idle timer; streamed unless ended (commit, reply driver)",
  4: "4 + usage row, trace, metrics, log line (bookkeeping)",
  5: "5 + Elysia instead of bare Bun.serve (framework)",
  6: "6 + parse and re-encode every SSE event (translation)",
  switchyard: "switchyard",
};
/** The servers of the ladder and switchyard; rung 6 (translation) runs on translated lanes only. */
export const TARGETS: Target[] = Object.entries(ROW_LABELS).map(([key, what]) => ({ key, what, translatedOnly: key === String(TOP_RUNG) }));
if (TARGETS.filter((t) => /^\d$/.test(t.key)).length !== TOP_RUNG + 1) throw new Error("the rows and scripts/lib/floor-server.ts's rungs disagree");

/** The lanes measured (columns): the bench's native lanes, JSON and stream, and messages→chat stream (translated). */
interface Column {
  lane: Lane;
  mode: Mode;
}
const LANES = benchLanes(2);
const lane = (name: string) => LANES.find((l) => l.name === name)!;
const ALL_COLUMNS: Column[] = [
  { lane: lane("chat→chat"), mode: "json" },
  { lane: lane("chat→chat"), mode: "stream" },
  { lane: lane("messages→messages"), mode: "json" },
  { lane: lane("messages→messages"), mode: "stream" },
  { lane: lane("gemini→gemini"), mode: "json" },
  { lane: lane("gemini→gemini"), mode: "stream" },
  { lane: lane("messages→chat"), mode: "stream" },
];
const colName = (c: Column) => `${c.lane.name} ${c.mode}`;
/** The columns of this run: every lane, or those `--lanes` names (in the table's order). */
export const COLUMN_NAMES = ALL_COLUMNS.map(colName);
const LANES_ARG = opt("--lanes");
if (argv.includes("--lanes") && (!LANES_ARG || LANES_ARG.startsWith("--"))) throw new Error(`--lanes needs names, e.g. "gemini→gemini stream,messages→messages json": of ${COLUMN_NAMES.join(", ")}`);
const picked = LANES_ARG?.split(",").map((x) => x.trim());
for (const name of picked ?? []) if (!COLUMN_NAMES.includes(name)) throw new Error(`--lanes: no lane "${name}": one of ${COLUMN_NAMES.join(", ")}`);
if (picked && WRITE) throw new Error("--lanes with --write: the table in docs/performance.md keeps every lane; run without --lanes to write it");
const COLUMNS = picked ? ALL_COLUMNS.filter((c) => picked.includes(colName(c))) : ALL_COLUMNS;
const runsOn = (t: Target, c: Column) => !t.translatedOnly || c.lane.kind === "translated";

/**
 * The request of a column to a target: switchyard gets the lane's own model (it routes it); the ladder,
 * like the raw pipe in scripts/bench, sends the client's request to the upstream endpoint of the client's
 * own format, without a provider prefix (rung 6 is the one that talks Chat upstream on messages→chat).
 */
function requestFor(t: Target, c: Column, url: string): { url: string; body: string } {
  const stream = c.mode === "stream";
  const model = t.key === "switchyard" ? c.lane.model : c.lane.model.replace(/^[^/]+\//, "");
  return { url: url + c.lane.path(stream, model), body: JSON.stringify(c.lane.body(stream, model)) };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-floor-"));
  const procs: Proc[] = [];
  const byKey = new Map<string, Proc>();
  try {
    const upstream = await startUpstream();
    procs.push(upstream);
    for (const t of TARGETS) {
      let p: Proc;
      if (t.key === "0") p = await startPipe(upstream.url);
      else if (t.key === "switchyard") {
        mkdirSync(join(dir, "switchyard"));
        p = await startSwitchyard(["bun", join(ROOT, "src/main.ts")], upstream.url, join(dir, "switchyard"));
      }
      else {
        const rungDir = join(dir, `rung-${t.key}`);
        mkdirSync(rungDir, { recursive: true });
        p = await startScript(`rung ${t.key}`, join(ROOT, "scripts/lib/floor-server.ts"), [t.key, rungDir], { UPSTREAM: upstream.url, ...SERVICE_ENV });
      }
      procs.push(p);
      byKey.set(t.key, p);
    }
    process.stderr.write(`bench-floor: ${TARGETS.length} servers up; ${WRK ? "wrk -t1 -c32" : "Bun load client"}; ${ROUNDS} round(s) of ${SECONDS} s per server and lane\n`);

    // Between its own runs a server waits while the others are measured (~25 s per lane). switchyard
    // then comes back slower: its idle trim (`Bun.shrink()` after IDLE_TRIM_MS without a request) drops
    // its compiled code, and even without a trim a lane whose code went unused for ~25 s measured at
    // 2× the CPU per request and a quarter of the requests/s for seconds (messages→chat stream, 2026-12-01).
    // So every server gets one request of one of its lanes (in turn) every 3 s while it is not being
    // measured, as under continuous mixed traffic; its CPU is read over its own runs only.
    let measuring: string | undefined;
    let turn = 0;
    const keepWarm = setInterval(() => {
      const c = COLUMNS[turn++ % COLUMNS.length];
      for (const t of TARGETS) if (t.key !== measuring && runsOn(t, c)) void timedRequest(...(Object.values(requestFor(t, c, byKey.get(t.key)!.url)) as [string, string])).catch(() => {});
    }, 3000);
    // Every server answers every lane it runs on (and its code is warm) before anything is measured.
    for (const c of COLUMNS)
      for (const t of TARGETS) {
        if (!runsOn(t, c)) continue;
        const r = requestFor(t, c, byKey.get(t.key)!.url);
        for (let k = 0; k < (SMOKE ? 2 : 200); k++) {
          const x = await timedRequest(r.url, r.body);
          if (x.status !== 200) throw new Error(`${t.what} on ${colName(c)}: HTTP ${x.status}`);
        }
      }

    const load = (url: string, body: string) => (WRK ? loadWrk(url, body, SECONDS, dir) : loadBun(url, body, SECONDS));
    // cpu[target][column] = µs per request per round; ratio likewise against rung 0 of the same round
    const cpu = new Map<string, number[][]>(TARGETS.map((t) => [t.key, COLUMNS.map(() => [])]));
    const ratio = new Map<string, number[][]>(TARGETS.map((t) => [t.key, COLUMNS.map(() => [])]));
    let errors = 0;
    if (!SMOKE) {
      process.stderr.write("warm-up run per server and lane…\n");
      for (const c of COLUMNS) for (const t of TARGETS) if (runsOn(t, c)) await load(...(Object.values(requestFor(t, c, byKey.get(t.key)!.url)) as [string, string]));
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (let ci = 0; ci < COLUMNS.length; ci++) {
        const c = COLUMNS[ci];
        const ts = TARGETS.filter((t) => runsOn(t, c));
        const order = ts.map((_, i) => ts[(i + r + ci) % ts.length]);
        const round = new Map<string, number>();
        for (const t of order) {
          const p = byKey.get(t.key)!;
          const req = requestFor(t, c, p.url);
          measuring = t.key;
          const c0 = cpuUs(p.pid);
          const res = await load(req.url, req.body);
          const us = (cpuUs(p.pid) - c0) / Math.max(1, res.requests);
          measuring = undefined;
          errors += res.errors;
          round.set(t.key, us);
          cpu.get(t.key)![ci].push(us);
        }
        for (const t of ts) ratio.get(t.key)![ci].push(round.get(t.key)! / round.get("0")!);
      }
      process.stderr.write(`round ${r + 1}/${ROUNDS} done\n`);
    }
    clearInterval(keepWarm);

    // ---- the table
    const cell = (key: string, ci: number) => {
      const xs = cpu.get(key)![ci];
      if (xs.length === 0) return "-";
      const us = median(xs);
      return key === "0" ? `${us.toFixed(0)}` : `${us.toFixed(0)} (${median(ratio.get(key)![ci]).toFixed(2)}×)`;
    };
    const lines: string[] = [];
    lines.push(`| server (CPU µs per request, × raw pipe of the same round) | ${COLUMNS.map(colName).join(" | ")} |`);
    lines.push(`|---|${COLUMNS.map(() => "---").join("|")}|`);
    for (const t of TARGETS) lines.push(`| ${t.what} | ${COLUMNS.map((_, ci) => cell(t.key, ci)).join(" | ")} |`);
    // The floor of a lane: its top rung (6 on translated lanes, 5 on native ones).
    const floorOf = (ci: number) => (runsOn(TARGETS[6], COLUMNS[ci]) ? "6" : "5");
    lines.push(
      `| switchyard above the floor (switchyard − top rung, µs; × the top rung) | ${COLUMNS.map((_, ci) => {
        const sy = median(cpu.get("switchyard")![ci]);
        const fl = median(cpu.get(floorOf(ci))![ci]);
        return `${(sy - fl).toFixed(0)} (${(sy / fl).toFixed(2)}×)`;
      }).join(" | ")} |`,
    );
    const table = lines.join("\n");
    const when = new Date().toISOString().slice(0, 16).replace("T", " ");
    const stamp = `${when} UTC, \`bun scripts/bench-floor.ts${argv.length ? " " + argv.join(" ") : ""}\`, Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores, ${WRK ? "wrk -t1 -c32" : "Bun load client (32 loops)"}, ${ROUNDS} round(s) of ${SECONDS} s per server and lane, medians; load errors: ${errors}`;
    console.log(stamp + "\n\n" + table);

    if (JSON_FILE) {
      const git = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      const result: FloorJson = {
        when: new Date().toISOString(),
        commit: git.exitCode === 0 ? git.stdout.toString().trim() : null,
        command: `bun scripts/bench-floor.ts${argv.length ? " " + argv.join(" ") : ""}`,
        machine: { cores: navigator.hardwareConcurrency, bun: Bun.version, loadClient: WRK ? "wrk -t1 -c32" : "Bun load client (32 loops)" },
        rounds: ROUNDS,
        seconds: SECONDS,
        loadErrors: errors,
        lanes: COLUMNS.map((c, ci) => ({
          name: colName(c),
          kind: c.lane.kind,
          topRung: floorOf(ci),
          servers: Object.fromEntries(
            TARGETS.filter((t) => cpu.get(t.key)![ci].length > 0).map((t) => [t.key, { cpuUs: median(cpu.get(t.key)![ci]), ratioToRaw: median(ratio.get(t.key)![ci]) }]),
          ),
        })),
      };
      writeFileSync(JSON_FILE, JSON.stringify(result, null, 2) + "\n");
      console.log(`\nwrote the figures to ${JSON_FILE}`);
    }

    if (WRITE) {
      const doc = readFileSync(DOC, "utf8");
      const a = doc.indexOf(MARKS[0]);
      const b = doc.indexOf(MARKS[1]);
      if (a < 0 || b < a) throw new Error(`${DOC} has no ${MARKS[0]} … ${MARKS[1]} section`);
      writeFileSync(DOC, doc.slice(0, a) + `${MARKS[0]}\nProduced ${stamp}.\n\n${table}\n${MARKS[1]}` + doc.slice(b + MARKS[1].length));
      console.log(`\nwrote the table into ${DOC}`);
    }
  } finally {
    for (const p of procs.reverse()) await stopProc(p);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await main();
  // keep-alive connections of the warm-up requests must not keep the script alive
  process.exit(0);
}
