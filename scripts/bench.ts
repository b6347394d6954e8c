#!/usr/bin/env bun
/**
 * scripts/bench: switchyard against a raw Bun pipe and the upstream itself, in ONE interleaved run.
 *
 * Three servers on 127.0.0.1, each its own process so its CPU can be read from /proc/PID/stat:
 * - the bench upstream (scripts/bench-upstream.ts): precomputed replies in Chat, Messages, Responses;
 * - the raw pipe (scripts/bench-pipe.ts): `fetch` upstream → `new Response(upstream.body)`;
 * - switchyard itself: `bun src/main.ts start --config … --port 0 --data-dir …` (the real app).
 *
 * Lanes (client endpoint → upstream format): chat→chat (native, kind openai), messages→messages
 * (native, kind anthropic), messages→chat and responses→chat (translated), gemini→gemini (the Gemini
 * client endpoints to a provider of kind gemini: native) and gemini→chat (translated), each
 * non-streaming and streaming; and responses-ws→chat: the same Responses request as responses→chat
 * sent as `response.create` frames over Codex's Responses WebSocket (SPEC 2.5), streamed only. "direct"
 * is the client talking to the upstream itself; the raw pipe and "direct" send the lane's client
 * request to the upstream endpoint of the client's own format (a pipe cannot translate), switchyard
 * sends it to the lane's upstream format. The raw pipe has no WebSocket: on the WebSocket lane
 * "direct" is the upstream's HTTP Responses stream and the raw column is empty (compare the lane with
 * responses→chat stream of the same run).
 *
 * Measured (see docs/performance.md): added latency p50/p99 at concurrency 1 and added time to the
 * first SSE frame (each minus direct in the same round); requests/s at concurrency 32 (wrk when
 * installed, else a Bun load client) with CPU µs per request of each proxy process (utime+stime over
 * the run); one 20,000-event stream per lane (events/s, MB/s, events per CPU-second); the in-process
 * reply drivers alone (native tap vs translation, events/s per core); RSS idle, peak under load and
 * with 1,000 open idle streams; idle RSS of the compiled binary.
 *
 * Rounds alternate between direct, raw pipe and switchyard (rotating which goes first); the latency and
 * requests/s sections visit the lanes in their listed order in even rounds and reversed in odd ones
 * (`roundOrder`, docs/performance.md item 97); every figure is the median over rounds, with the spread
 * (min–max over rounds) in the JSON.
 *
 * Usage: scripts/bench [--quick] [--json out.json] [--rounds N] [--no-binary] [--body-kb N]
 *        [--prewarm N]               (seconds of unmeasured concurrency-1 requests to the raw pipe and
 *                                     switchyard over every lane before the latency section; default 60,
 *                                     --quick 10, --smoke 0.2; 0: none)
 *        [--database postgres://…]   (switchyard on the PostgreSQL store instead of SQLite, SPEC D-2)
 *        [--lanes responses,gemini]  (only lanes whose name contains one of the words)
 *        [--smoke]                   (one round of a few requests per lane: proves every lane runs,
 *                                     its figures mean nothing; test/scripts/bench-lanes.test.ts)
 */
// The load client opens 1,000 streams at once. Bun reads this variable only at process start
// (setting it in process.env is too late), so without it the bench runs itself again with it.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const child = Bun.spawn([process.execPath, ...process.argv.slice(1)], { stdio: ["inherit", "inherit", "inherit"], env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" } });
  process.exit(await child.exited);
}

import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { driverBench } from "./bench-drivers.ts";
import { benchLanes, MODES, type Lane, type Mode, roundOrder } from "./bench-lanes.ts";
import { IDLE_TRIM_MS } from "../src/memory/idle-trim.ts";
import { BenchSocket, CONCURRENCY, HEADERS, keptSocket, loadBun, loadWrk, loadWs, type LoadResult, timedRequest, type Timed, WRK } from "./bench-load.ts";
import { cpuUs, median, type Proc, quantile, ratio, round, rssMb, spread, startPipe, startSwitchyard, startUpstream, stopProc, table, TICK_US } from "./lib/bench-procs.ts";
import { benchJsonFile } from "./lib/bench-json-file.ts";

const ROOT = join(import.meta.dir, "..");
const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const SMOKE = flag("--smoke");
const QUICK = flag("--quick") || SMOKE;
const JSON_OUT = opt("--json");
const ROUNDS = Number(opt("--rounds") ?? (SMOKE ? 1 : QUICK ? 3 : 5));
const LAT_N = SMOKE ? 10 : QUICK ? 150 : 400;
/**
 * Unmeasured requests to a target on a lane right before its measured latency requests: a lane comes
 * round only every minute or two here, while a gateway in use serves its lanes continuously. 20 warm-up
 * requests (before issue 17's round 4) left part of a lane's measured requests in the JIT's lower tiers
 * (switchyard's per-request functions reach JavaScriptCore's top tier only after tens of seconds of
 * traffic, docs/performance.md "JIT compilation, the idle trim and allocation churn").
 */
const LAT_WARM = SMOKE ? 2 : QUICK ? 100 : 300;
/**
 * `--prewarm N`: seconds of unmeasured requests at concurrency 1 over every lane and mode, to the raw pipe
 * and switchyard in turn (the upstream serves both), before the latency section. A gateway in use has
 * served its lanes for minutes; a server just started is still compiling its code for tens of seconds,
 * and on 2 cores each compile burst takes a core from the client, the upstream or the proxy's own
 * threads: slow requests enough to set the p99 at concurrency 1 (docs/performance.md items 304 and 306:
 * after 60 s of such traffic the added p99 was lower on 8 of 10 lane pairs in two interleaved runs,
 * 0.43–3.20 ms against 1.67–3.55 for a server started with it).
 * Every proxy gets the same warm-up; LAT_WARM still warms each lane's connection right before it is
 * measured.
 */
const LAT_PREWARM_SECONDS = Number(opt("--prewarm") ?? (SMOKE ? 0.2 : QUICK ? 10 : 60));
const RPS_SECONDS = SMOKE ? 1 : QUICK ? 2 : 4;
/**
 * Seconds of unmeasured load (the same lane, target and concurrency) right before each measured
 * requests/s run, for the same reason as {@link LAT_WARM}, and because a server whose lane waited ~25 s
 * came back at up to 2× the CPU per request for its next 3–4 s, which a 4 s run mostly measured
 * (docs/performance.md: the allocator re-faulting the memory it gave back during the wait). Every
 * target gets the same warm-up.
 */
const RPS_WARM_SECONDS = SMOKE ? 0 : 1;
const RPS_ROUNDS = SMOKE ? 1 : QUICK ? 2 : 3;
/** --smoke: the most windows a requests/s run is extended by when it measured nothing (see throughput). */
const SMOKE_MAX_EXTRA_WINDOWS = 20;
const OPEN_STREAMS = 1000;
const BODY_KB = Number(opt("--body-kb") ?? 2);
const BUILD_BINARY = !flag("--no-binary");
/** `--database URL`: run switchyard on the PostgreSQL store (the URL's database is used as is). */
const DATABASE = opt("--database");
/** `--only latency,throughput,streams,drivers,open,binary`: run some sections (debugging). */
const ONLY = opt("--only")?.split(",");
const run = (section: string) => !ONLY || ONLY.includes(section);

type TargetName = "direct" | "raw" | "switchyard";
const TARGETS: TargetName[] = ["direct", "raw", "switchyard"];
const ALL_LANES = benchLanes(BODY_KB);
/** `--lanes a,b`: the lanes whose name contains one of the words. */
const LANE_FILTER = opt("--lanes")?.split(",").filter(Boolean);
const LANES = LANE_FILTER ? ALL_LANES.filter((l) => LANE_FILTER.some((w) => l.name.includes(w))) : ALL_LANES;
if (LANES.length === 0) throw new Error(`--lanes ${opt("--lanes")}: no lane matches (lanes: ${ALL_LANES.map((l) => l.name).join(", ")})`);
const modesOf = (lane: Lane) => lane.modes ?? MODES;
/** The targets a lane runs on: no raw pipe for the WebSocket lane. */
const targetsOf = (lane: Lane): TargetName[] => (lane.transport === "websocket" ? ["direct", "switchyard"] : TARGETS);

/** The model name of a variant: `gpt-bench` → `gpt-bench-big`. */
const variant = (lane: Lane, v: "" | "-big" | "-hold") => lane.model + v;
/** direct and raw call the upstream's own endpoint of the client's format; model prefixes are gateway-only. */
const modelFor = (lane: Lane, target: TargetName, v: "" | "-big" | "-hold") => (target === "switchyard" ? variant(lane, v) : variant(lane, v).replace(/^[^/]+\//, ""));
const bodyFor = (lane: Lane, target: TargetName, stream: boolean, v: "" | "-big" | "-hold" = "") => JSON.stringify(lane.body(stream, modelFor(lane, target, v)));

/**
 * One lane request to one target: the URL (with the model and method in the path on Gemini lanes) and
 * what is sent. On the WebSocket lane switchyard gets a `response.create` frame on a `ws://` URL.
 */
interface Call {
  url: string;
  body: string;
  websocket: boolean;
}
function callFor(lane: Lane, target: TargetName, stream: boolean, v: "" | "-big" | "-hold" = ""): Call {
  const model = modelFor(lane, target, v);
  const path = lane.path(stream, model);
  if (lane.transport === "websocket" && target === "switchyard") {
    return { url: urls.switchyard.replace(/^http/, "ws") + path, body: JSON.stringify({ type: "response.create", ...lane.body(stream, model) }), websocket: true };
  }
  return { url: urls[target] + path, body: JSON.stringify(lane.body(stream, model)), websocket: false };
}

// ---- clients --------------------------------------------------------------------------------------

const urls: Record<TargetName, string> = { direct: "", raw: "", switchyard: "" };
const procs: Partial<Record<TargetName, Proc>> = {};

/** One socket per URL for the sequential sections (latency, streams), opened on first use and again once closed. */
const sockets = new Map<string, Promise<BenchSocket>>();

/** One request of a lane to a target, read to the end (over HTTP, or as one frame on a kept socket). */
async function timedCall(c: Call): Promise<Timed> {
  if (!c.websocket) return timedRequest(c.url, c.body);
  return (await keptSocket(sockets, c.url)).send(c.body);
}

/**
 * A section's rows (one per lane and mode, in the order of {@link LANES}) with their lane, mode and
 * 1-based position in that order (the offset of the target rotation, {@link orderFor}); a section visits
 * them in {@link roundOrder}.
 */
function cellsOf<R>(rows: R[]): { lane: Lane; mode: Mode; row: R; i: number }[] {
  const cells: { lane: Lane; mode: Mode; row: R; i: number }[] = [];
  for (const lane of LANES) for (const mode of modesOf(lane)) cells.push({ lane, mode, row: rows[cells.length], i: cells.length + 1 });
  return cells;
}

/** Rotates a lane's target order per round so none always runs first. */
const orderFor = (r: number, lane: Lane) => {
  const ts = targetsOf(lane);
  return ts.map((_, i) => ts[(i + r) % ts.length]);
};

// ---- 1. latency at concurrency 1 --------------------------------------------------------------------

interface LatencyRow {
  lane: string;
  mode: Mode;
  /** per target: per-round p50/p99 total ms and p50 first-frame ms */
  rounds: Record<TargetName, { p50: number; p99: number; first50: number }[]>;
}

async function latency(): Promise<LatencyRow[]> {
  const rows: LatencyRow[] = [];
  for (const lane of LANES) for (const mode of modesOf(lane)) rows.push({ lane: lane.name, mode, rounds: { direct: [], raw: [], switchyard: [] } });
  for (let r = 0; r < ROUNDS; r++) {
    for (const { lane, mode, row, i } of roundOrder(cellsOf(rows), r)) {
      for (const t of orderFor(r + i, lane)) {
        const call = callFor(lane, t, mode === "stream");
        for (let w = 0; w < LAT_WARM; w++) await timedCall(call); // warm the connection and JIT
        const totals: number[] = [];
        const firsts: number[] = [];
        for (let k = 0; k < LAT_N; k++) {
          const x = await timedCall(call);
          if (x.status !== 200) throw new Error(`${t} ${lane.name} ${mode}: HTTP ${x.status}`);
          totals.push(x.total);
          firsts.push(x.first);
        }
        row.rounds[t].push({ p50: median(totals), p99: quantile(totals, 0.99), first50: median(firsts) });
      }
    }
    process.stderr.write(`latency round ${r + 1}/${ROUNDS} done\n`);
  }
  return rows;
}

/**
 * {@link LAT_PREWARM_SECONDS} of unmeasured requests at concurrency 1: 20 at a time per lane, mode and
 * proxy (raw pipe, switchyard), round-robin until the time is up (at least one pass). Returns the
 * requests sent to each proxy.
 */
async function prewarm(): Promise<Record<TargetName, number>> {
  const sent: Record<TargetName, number> = { direct: 0, raw: 0, switchyard: 0 };
  const calls: { t: TargetName; call: Call }[] = [];
  for (const lane of LANES) for (const mode of modesOf(lane)) for (const t of targetsOf(lane)) if (t !== "direct") calls.push({ t, call: callFor(lane, t, mode === "stream") });
  const until = performance.now() + LAT_PREWARM_SECONDS * 1000;
  do {
    for (const { t, call } of calls) {
      for (let k = 0; k < 20; k++) {
        const x = await timedCall(call);
        if (x.status !== 200) throw new Error(`prewarm ${t} ${call.url}: HTTP ${x.status}`);
      }
      sent[t] += 20;
    }
  } while (performance.now() < until);
  return sent;
}

// ---- 2. requests/s at concurrency 32, CPU per request, peak RSS -------------------------------------

interface RpsRow {
  lane: string;
  mode: Mode;
  rps: Record<TargetName, number[]>;
  cpuUsPerReq: Record<TargetName, number[]>;
  errors: number;
  /** one line per round and target that had errors: "round 2, switchyard: 32 (wrk: … timeout 32)" */
  errorDetails: string[];
}

async function throughput(dir: string, peak: Record<TargetName, number>): Promise<RpsRow[]> {
  const rows: RpsRow[] = [];
  for (const lane of LANES) for (const mode of modesOf(lane)) rows.push({ lane: lane.name, mode, rps: { direct: [], raw: [], switchyard: [] }, cpuUsPerReq: { direct: [], raw: [], switchyard: [] }, errors: 0, errorDetails: [] });
  for (let r = 0; r < RPS_ROUNDS; r++) {
    for (const { lane, mode, row, i } of roundOrder(cellsOf(rows), r)) {
      for (const t of orderFor(r + i, lane)) {
        const pid = procs[t]!.pid;
        const call = callFor(lane, t, mode === "stream");
        const load = (seconds: number) => (call.websocket ? loadWs(call.url, call.body, seconds) : WRK ? loadWrk(call.url, call.body, seconds, dir) : loadBun(call.url, call.body, seconds));
        if (RPS_WARM_SECONDS > 0) await load(RPS_WARM_SECONDS);
        const c0 = cpuUs(pid);
        const sampler = setInterval(() => (peak[t] = Math.max(peak[t], rssMb(pid))), 100);
        let res: LoadResult;
        try {
          res = await load(RPS_SECONDS);
          // --smoke proves every row gets its figures: on a loaded machine one short window can end
          // with no request answered (wrk counts only finished ones) or the target's CPU clock (10 ms
          // ticks) not moved, so the window is extended, one more at a time, until both happened.
          let more = 0;
          for (; SMOKE && more < SMOKE_MAX_EXTRA_WINDOWS && (res.requests === 0 || cpuUs(pid) === c0); more++) {
            const next = await load(RPS_SECONDS);
            res = { requests: res.requests + next.requests, seconds: res.seconds + next.seconds, errors: res.errors + next.errors, errorDetail: res.errorDetail ?? next.errorDetail };
          }
          if (more > 0) process.stderr.write(`throughput ${lane.name} ${mode} ${t}: ${more} more window(s) of ${RPS_SECONDS} s until it measured something\n`);
        } finally {
          clearInterval(sampler);
        }
        peak[t] = Math.max(peak[t], rssMb(pid));
        const c1 = cpuUs(pid);
        row.rps[t].push(res.requests / res.seconds);
        row.cpuUsPerReq[t].push((c1 - c0) / Math.max(1, res.requests));
        row.errors += res.errors;
        if (res.errors > 0) {
          const line = `round ${r + 1}, ${t}: ${res.errors} (${res.errorDetail ?? "no detail"})`;
          row.errorDetails.push(line);
          process.stderr.write(`throughput ${lane.name} ${mode} errors: ${line}\n`);
        }
      }
    }
    process.stderr.write(`throughput round ${r + 1}/${RPS_ROUNDS} done\n`);
  }
  return rows;
}

// ---- 3. one 20,000-event stream per lane ------------------------------------------------------------

const BIG_EVENTS = 20_000;
/** Big streams per measurement (the CPU figure is their total over the count). */
const STREAM_REPS = SMOKE ? 1 : QUICK ? 4 : 8;

interface StreamRow {
  lane: string;
  /** per target per round: seconds, MB received, proxy CPU seconds */
  runs: Record<TargetName, { seconds: number; mb: number; cpuS: number }[]>;
}

async function streams(): Promise<StreamRow[]> {
  const rows = LANES.map((l) => ({ lane: l.name, runs: { direct: [], raw: [], switchyard: [] } }) as StreamRow);
  for (let r = 0; r < ROUNDS; r++) {
    for (let li = 0; li < LANES.length; li++) {
      const lane = LANES[li];
      for (const t of orderFor(r + li, lane)) {
        const call = callFor(lane, t, true, "-big");
        const pid = procs[t]!.pid;
        await timedCall(call); // warm-up
        // STREAM_REPS streams back to back: the CPU clock ticks in 10 ms steps, one stream takes a few.
        const c0 = cpuUs(pid);
        let seconds = 0;
        let bytes = 0;
        for (let k = 0; k < STREAM_REPS; k++) {
          const x = await timedCall(call);
          if (x.status !== 200) throw new Error(`stream ${t} ${lane.name}: HTTP ${x.status}`);
          seconds += x.total / 1000;
          bytes += x.bytes;
        }
        const c1 = cpuUs(pid);
        rows[li].runs[t].push({ seconds: seconds / STREAM_REPS, mb: bytes / STREAM_REPS / 1e6, cpuS: (c1 - c0) / 1e6 / STREAM_REPS });
      }
    }
  }
  return rows;
}

// ---- 4. in-process reply drivers (no network): scripts/bench-drivers.ts -----------------------------

// ---- 5. 1,000 open idle streams ---------------------------------------------------------------------

interface OpenStreamsResult {
  target: TargetName;
  opened: number;
  upstreamHeld: number;
  seconds: number;
  rssBeforeMb: number;
  rssOpenMb: number;
}

async function openStreams(target: TargetName, lane: Lane): Promise<OpenStreamsResult> {
  const pid = procs[target]!.pid;
  Bun.gc(true);
  await Bun.sleep(300);
  const rssBeforeMb = rssMb(pid);
  const ctrls: AbortController[] = [];
  const call = callFor(lane, target, true, "-hold");
  const t0 = performance.now();
  let opened = 0;
  const first = Array.from({ length: OPEN_STREAMS }, async () => {
    const ctrl = new AbortController();
    ctrls.push(ctrl);
    const res = await fetch(call.url, { method: "POST", headers: HEADERS, body: call.body, signal: ctrl.signal });
    const reader = res.body!.getReader();
    const r = await reader.read();
    if (!r.done && r.value.byteLength > 0) opened++;
  });
  await Promise.race([Promise.allSettled(first), Bun.sleep(30_000)]);
  const seconds = (performance.now() - t0) / 1000;
  await Bun.sleep(500);
  const rssOpenMb = rssMb(pid);
  process.stderr.write(`  ${target}: ${opened}/${OPEN_STREAMS} streams open after ${seconds.toFixed(2)} s\n`);
  const upstreamHeld = Number(await (await fetch(procs.direct!.url + "/held")).text());
  for (const c of ctrls) c.abort();
  // let the proxies notice and free the streams before the next measurement
  for (let i = 0; i < 50; i++) {
    await Bun.sleep(100);
    if (Number(await (await fetch(procs.direct!.url + "/held")).text()) === 0) break;
  }
  return { target, opened, upstreamHeld, seconds, rssBeforeMb, rssOpenMb };
}

// ---- 6. compiled binary idle RSS --------------------------------------------------------------------

/** Requests sent to the compiled binary before its warm idle RSS is read. */
const BINARY_WARM_REQUESTS = 1000;

/** Anonymous and file-backed parts of a process's RSS, MB (`RssAnon`, `RssFile` of /proc/PID/status). */
function rssParts(pid: number): { anonMb: number; fileMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { anonMb: mb("RssAnon"), fileMb: mb("RssFile") };
}

async function binaryRss(upstream: string, dir: string): Promise<{ idleMb: number; warmIdleMb: number; trimmedIdleMb: number; trimmed: { anonMb: number; fileMb: number }; sizeMb: number } | { error: string }> {
  const out = join(dir, "switchyard-bin");
  const b = Bun.spawn(["bun", "build", "--compile", join(ROOT, "src/main.ts"), "--outfile", out], { stdout: "pipe", stderr: "pipe", cwd: ROOT });
  const code = await b.exited;
  if (code !== 0) return { error: `bun build --compile failed: ${(await new Response(b.stderr).text()).slice(0, 300)}` };
  const bdir = join(dir, "bin");
  mkdirSync(bdir, { recursive: true });
  const p = await startSwitchyard([out], upstream, bdir, "binary", DATABASE);
  try {
    await Bun.sleep(1500);
    const idleMb = rssMb(p.pid);
    const lane = ALL_LANES[0];
    // Issue 17's target: idle RSS of the compiled binary ≤ 60 MB after 1,000 requests.
    for (let k = 0; k < BINARY_WARM_REQUESTS; k++) await timedRequest(p.url + lane.path(k % 2 === 0, lane.model), bodyFor(lane, "switchyard", k % 2 === 0));
    await Bun.sleep(1500);
    const warmIdleMb = rssMb(p.pid);
    // Once idle for IDLE_TRIM_MS the gateway gives memory back (src/memory/idle-trim.ts).
    await Bun.sleep(IDLE_TRIM_MS + 2500);
    const trimmedIdleMb = rssMb(p.pid);
    // The trim also drops the executable's clean pages (src/memory/file-pages.ts): they come back as
    // code runs, so the split says which part fell.
    const trimmed = rssParts(p.pid);
    return { idleMb, warmIdleMb, trimmedIdleMb, trimmed, sizeMb: Bun.file(out).size / 1e6 };
  } finally {
    await stopProc(p);
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-"));
  const started = performance.now();
  const all: Proc[] = [];
  try {
    const upstream = await startUpstream();
    all.push(upstream);
    const pipe = await startPipe(upstream.url);
    all.push(pipe);
    const sy = await startSwitchyard(["bun", join(ROOT, "src/main.ts")], upstream.url, dir, "switchyard", DATABASE);
    all.push(sy);
    procs.direct = upstream;
    procs.raw = pipe;
    procs.switchyard = sy;
    urls.direct = upstream.url;
    urls.raw = pipe.url;
    urls.switchyard = sy.url;
    await Bun.sleep(1000);
    const idle = { direct: rssMb(upstream.pid), raw: rssMb(pipe.pid), switchyard: rssMb(sy.pid) };
    process.stderr.write(`bench: upstream ${upstream.url}, raw pipe ${pipe.url}, switchyard ${sy.url}; ${WRK ? "wrk" : "Bun load client"}; ${QUICK ? "quick" : "full"} run\n`);

    const prewarmed = run("latency") && LAT_PREWARM_SECONDS > 0 ? await prewarm() : undefined;
    if (prewarmed) process.stderr.write(`prewarm: ${prewarmed.raw} requests to the raw pipe, ${prewarmed.switchyard} to switchyard\n`);
    const lat = run("latency") ? await latency() : [];
    const peak: Record<TargetName, number> = { direct: 0, raw: 0, switchyard: 0 };
    const rps = run("throughput") ? await throughput(dir, peak) : [];
    Bun.gc(true);
    await Bun.sleep(1000);
    const idleAfter = { direct: rssMb(upstream.pid), raw: rssMb(pipe.pid), switchyard: rssMb(sy.pid) };
    const str = run("streams") ? await streams() : [];
    const codec = run("drivers") ? await driverBench({ upstream: procs.direct!.url, headers: HEADERS, rounds: ROUNDS, reps: QUICK ? 5 : 15, events: BIG_EVENTS }) : [];
    process.stderr.write("open streams…\n");
    const open: OpenStreamsResult[] = [];
    if (run("open")) for (const t of ["raw", "switchyard"] as TargetName[]) open.push(await openStreams(t, ALL_LANES[1]));
    const binary = BUILD_BINARY && run("binary") ? await binaryRss(upstream.url, dir) : undefined;

    // ---- assemble
    // A target a lane does not run on (the raw pipe on the WebSocket lane) is null in the JSON.
    const orNull = <T>(xs: unknown[], f: () => T): T | null => (xs.length === 0 ? null : f());
    const latRows = lat.map((row) => {
      const added = (t: TargetName, k: "p50" | "p99" | "first50") => row.rounds[t].map((x, i) => x[k] - row.rounds.direct[i][k]);
      const addedOf = (t: TargetName) => orNull(row.rounds[t], () => ({ addedP50Ms: spread(added(t, "p50")), addedP99Ms: spread(added(t, "p99")), addedFirstFrameMs: spread(added(t, "first50")) }));
      return {
        lane: row.lane,
        mode: row.mode,
        direct: { p50Ms: median(row.rounds.direct.map((x) => x.p50)), p99Ms: median(row.rounds.direct.map((x) => x.p99)), firstFrameMs: median(row.rounds.direct.map((x) => x.first50)) },
        raw: addedOf("raw"),
        switchyard: addedOf("switchyard")!,
      };
    });
    const rpsRows = rps.map((row) => ({
      lane: row.lane,
      mode: row.mode,
      rps: { direct: spread(row.rps.direct), raw: orNull(row.rps.raw, () => spread(row.rps.raw)), switchyard: spread(row.rps.switchyard) },
      cpuUsPerRequest: { upstream: spread(row.cpuUsPerReq.direct), raw: orNull(row.cpuUsPerReq.raw, () => spread(row.cpuUsPerReq.raw)), switchyard: spread(row.cpuUsPerReq.switchyard) },
      /** switchyard's CPU per request over the raw pipe's of the same round (measured seconds apart), per round */
      cpuRatioToRaw: orNull(row.cpuUsPerReq.raw, () => spread(row.cpuUsPerReq.switchyard.map((x, i) => x / row.cpuUsPerReq.raw[i]))),
      errors: row.errors,
      /** per round and target with errors: how many and what (wrk's counts by kind, or the first error) */
      errorDetails: row.errorDetails,
    }));
    const strRows = str.map((row) => {
      const per = (t: TargetName) => ({
        eventsPerSec: spread(row.runs[t].map((x) => BIG_EVENTS / x.seconds)),
        mbPerSec: spread(row.runs[t].map((x) => x.mb / x.seconds)),
        // at the clock's resolution: one tick over all STREAM_REPS streams is the least that can be measured
        eventsPerCpuSec: t === "direct" ? undefined : spread(row.runs[t].map((x) => BIG_EVENTS / Math.max(x.cpuS, TICK_US / 1e6 / STREAM_REPS))),
      });
      return { lane: row.lane, direct: per("direct"), raw: orNull(row.runs.raw, () => per("raw")), switchyard: per("switchyard") };
    });
    const codecRows = codec.map((c) => ({ lane: c.lane, driver: c.driver, eventsPerSec: spread(c.eventsPerSec), mbPerSec: spread(c.mbPerSec) }));
    const result = {
      when: new Date().toISOString(),
      command: `scripts/bench ${argv.join(" ").replace(/(:\/\/[^:/@\s]+):[^@\s]*@/g, "$1:***@")}`.trim(),
      machine: { cores: navigator.hardwareConcurrency, bun: Bun.version, loadClient: WRK ? "wrk -t1 -c32" : "bun fetch x32" },
      lanes: LANES.map((l) => ({ name: l.name, kind: l.kind, transport: l.transport ?? "http", modes: modesOf(l), targets: targetsOf(l) })),
      settings: { rounds: ROUNDS, latencyRequestsPerRound: LAT_N, latencyWarmRequests: LAT_WARM, latencyPrewarmSeconds: LAT_PREWARM_SECONDS, latencyPrewarmRequests: prewarmed ?? null, rpsSeconds: RPS_SECONDS, rpsWarmSeconds: RPS_WARM_SECONDS, rpsRounds: RPS_ROUNDS, concurrency: CONCURRENCY, bodyBytes: bodyFor(ALL_LANES[0], "switchyard", false).length, bigEvents: BIG_EVENTS, openStreams: OPEN_STREAMS },
      latency: latRows,
      throughput: rpsRows,
      streamThroughput: strRows,
      replyDrivers: codecRows,
      rss: { idleMb: idle, idleAfterLoadMb: idleAfter, peakUnderLoadMb: peak, openStreams: open, binary },
      seconds: (performance.now() - started) / 1000,
    };

    // ---- print
    const m = (s: { median: number } | null | undefined) => (s ? s.median : NaN);
    const out: string[] = [];
    out.push(`\nswitchyard bench — ${result.command} — ${result.when} — ${result.machine.cores} cores, bun ${Bun.version}, ${result.machine.loadClient}`);
    out.push(`medians over ${ROUNDS} rounds (latency, streams) / ${RPS_ROUNDS} rounds (throughput); body ${result.settings.bodyBytes} bytes\n`);
    out.push("Added latency at concurrency 1 (ms, minus direct in the same round)");
    out.push(
      table(
        ["lane", "mode", "direct p50", "raw +p50", "sy +p50", "raw +p99", "sy +p99", "raw +1st frame", "sy +1st frame", "sy/raw +p50"],
        latRows.map((r) => [r.lane, r.mode, r.direct.p50Ms, m(r.raw?.addedP50Ms), m(r.switchyard.addedP50Ms), m(r.raw?.addedP99Ms), m(r.switchyard.addedP99Ms), r.mode === "stream" ? m(r.raw?.addedFirstFrameMs) : null, r.mode === "stream" ? m(r.switchyard.addedFirstFrameMs) : null, ratio(m(r.switchyard.addedP50Ms), m(r.raw?.addedP50Ms))]),
      ),
    );
    out.push(`\nRequests/s at concurrency ${CONCURRENCY} and CPU µs per request of each process`);
    out.push(
      table(
        ["lane", "mode", "direct rps", "raw rps", "sy rps", "sy/raw rps", "raw µs/req", "sy µs/req", "sy/raw CPU", "errors"],
        rpsRows.map((r) => [r.lane, r.mode, m(r.rps.direct), m(r.rps.raw), m(r.rps.switchyard), ratio(m(r.rps.switchyard), m(r.rps.raw)), m(r.cpuUsPerRequest.raw), m(r.cpuUsPerRequest.switchyard), m(r.cpuRatioToRaw), r.errors]),
      ),
    );
    for (const r of rpsRows) for (const line of r.errorDetails) out.push(`errors on ${r.lane} ${r.mode}: ${line}`);
    out.push(`\nOne ${BIG_EVENTS.toLocaleString("en-US")}-event stream per lane (events/s wall; events per CPU-second of the proxy)`);
    out.push(
      table(
        ["lane", "direct ev/s", "raw ev/s", "sy ev/s", "sy/raw", "raw MB/s", "sy MB/s", "raw ev/CPU-s", "sy ev/CPU-s"],
        strRows.map((r) => [r.lane, m(r.direct.eventsPerSec), m(r.raw?.eventsPerSec), m(r.switchyard.eventsPerSec), ratio(m(r.switchyard.eventsPerSec), m(r.raw?.eventsPerSec)), m(r.raw?.mbPerSec), m(r.switchyard.mbPerSec), m(r.raw?.eventsPerCpuSec), m(r.switchyard.eventsPerCpuSec)]),
      ),
    );
    out.push(`\nReply drivers in process (one core, no network; ${BIG_EVENTS.toLocaleString("en-US")}-event streams in 16 KiB reads)`);
    out.push(table(["lane", "driver", "events/s", "MB/s"], codecRows.map((c) => [c.lane, c.driver, m(c.eventsPerSec), m(c.mbPerSec)])));
    out.push("\nRSS (MB)");
    out.push(
      table(
        ["process", "idle", "idle after load", "peak under load", `${OPEN_STREAMS} open streams`, "added by streams", "streams opened"],
        (["raw", "switchyard"] as TargetName[]).map((t) => {
          const o = open.find((x) => x.target === t);
          if (!o) return [t, idle[t], idleAfter[t], peak[t], null, null, null];
          return [t, idle[t], idleAfter[t], peak[t], o.rssOpenMb, o.rssOpenMb - o.rssBeforeMb, `${o.opened}/${OPEN_STREAMS} in ${o.seconds.toFixed(2)} s (upstream held ${o.upstreamHeld})`];
        }),
      ),
    );
    if (binary) out.push("error" in binary ? `compiled binary: ${binary.error}` : `compiled binary (${binary.sizeMb.toFixed(0)} MB): idle RSS ${binary.idleMb.toFixed(1)} MB, idle after ${BINARY_WARM_REQUESTS} requests ${binary.warmIdleMb.toFixed(1)} MB, ${binary.trimmedIdleMb.toFixed(1)} MB after ${IDLE_TRIM_MS / 1000} s idle (memory trimmed: ${binary.trimmed.anonMb.toFixed(1)} anonymous + ${binary.trimmed.fileMb.toFixed(1)} file-backed)`);
    out.push(`\ntook ${result.seconds.toFixed(0)} s`);
    process.stdout.write(out.join("\n") + "\n");

    const file = benchJsonFile({ json: JSON_OUT, smoke: SMOKE, root: ROOT });
    if (file === null) process.stderr.write("JSON not written (a --smoke run writes it only with --json FILE)\n");
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(result, (_k, v) => (typeof v === "number" ? round(v) : v), 2));
      process.stderr.write(`JSON written to ${file}\n`);
    }
  } finally {
    for (const s of sockets.values()) void s.then((x) => x.close()).catch(() => {});
    for (const p of all.reverse()) await stopProc(p);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
// Whatever a lane left open (keep-alive connections, a socket still closing) must not keep the bench alive.
process.exit(0);
