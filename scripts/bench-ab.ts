#!/usr/bin/env bun
/**
 * An interleaved A/B of switchyard builds over the wire (issue 17): the bench upstream
 * (scripts/bench-upstream.ts) and one switchyard per source tree (`bun TREE/src/main.ts start`, as
 * scripts/bench and scripts/bench-floor.ts start it), optionally the floor's rung 5
 * (scripts/lib/floor-server.ts) beside them; then rounds of `wrk -t1 -c32` runs (the Bun load client of
 * scripts/bench when wrk is not installed), each round with the servers started anew in a rotated order
 * (the server started first read faster whichever tree it was: docs/performance.md items 153 and 170)
 * and their runs' order rotating per lane and round, each server's CPU read from /proc/PID/stat over its
 * own run and divided by the requests it served. Prints each round's CPU µs per request and the medians,
 * each build's median ratio to the first build of the same round (the A/B figure: same minute, same
 * machine load), its difference by start order and the server started last minus the one started first.
 *
 * Every server, each round, answers 100 requests of every lane and gets one warm-up run per lane first;
 * while it waits for its next run it gets one request of one of its lanes every 3 s (as in
 * bench-floor.ts: a lane left unused for ~25 s comes back slower).
 *
 * Usage: bun scripts/bench-ab.ts [--tree NAME=DIR]... [--rung5] [--lanes chat-json,messages-json,…]
 *        [--rounds N] [--seconds N] [--warm N] [--threads] [--latency N] [--smoke]
 *   --tree: NAME=DIR[:VAR=value,…]: a switchyard source tree (at least one; each with its node_modules
 *           installed), started with those environment variables; the first is the reference of the ratios
 *   --smoke: 1 s rounds (one unless --rounds), no warm-up run (proves it runs; figures mean nothing; test/scripts/bench-ab.test.ts)
 *   --warm N: N s of unmeasured load per server and lane, each round after the servers start (default 1)
 *   --rounds N: rounds (default 5, with --smoke 1); a multiple of the servers' count starts each in each place equally
 *           often, and its square also gives each place in the CPU runs' order with each start order
 *   --threads: also each server's CPU by thread name (JS thread, HTTP client, JIT, GC, allocator) and
 *           its minor page faults per request (a fault costs ~15 µs of CPU on the sandbox VM of 2026-12-03)
 *   --latency N: instead of the wrk runs, latency at concurrency 1 (scripts/bench's first section, A/B):
 *           each round starts the servers anew in a rotated order (a,b then b,a: the server started
 *           first read 7–48 µs faster, docs/performance.md item 153) and warms them (as above), then per
 *           lane sends N requests to each server and to the upstream directly ("direct"), one at a time
 *           in an order where each target follows every other equally often, each read to its end;
 *           prints per server the p50 minus direct's p50 of the same round (the added p50, median of the
 *           rounds), its difference to the first tree's (the mean of the start orders' medians), that
 *           difference by start order, and the server started last minus the one started first (the
 *           start order's bias), as the CPU A/B does. Use a multiple of the servers' count as --rounds.
 *           On the WebSocket lane each server is sent the frames on
 *           one socket kept open and "direct" is the same request to the upstream over HTTP (as in
 *           scripts/bench: the upstream has no WebSocket).
 *   --lanes: LANE-MODE names, comma-separated (default chat-json,messages-json): every lane of
 *            scripts/bench-lanes.ts, a native lane by its format alone (chat, messages, gemini), a
 *            translated one by its full name (messages→chat, responses→chat, gemini→chat,
 *            responses-ws→chat: the Responses WebSocket, stream only, no rung 5); MODE json or stream;
 *            codex→chat and codex-ws→chat are the Responses lanes with Codex's recorded request, and
 *            responses (native: json, stream) and responses-ws→responses the Responses passthrough
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVICE_ENV } from "../src/cli/service.ts";
import { balancedSequence, benchLanes, type Lane, MODES, type Mode, rotated } from "./bench-lanes.ts";
import { BenchSocket, loadBun, loadWrk, loadWs, timedRequest, type Timed, WRK } from "./bench-load.ts";
import { cpuUs, median, minorFaults, type Proc, startScript, startSwitchyard, startUpstream, stopProc } from "./lib/bench-procs.ts";
import { threadsByName } from "./lib/threads.ts";

const ROOT = join(import.meta.dir, "..");
const argv = process.argv.slice(2);
const opts = (name: string) => argv.flatMap((a, i) => (a === name && argv[i + 1] !== undefined ? [argv[i + 1]] : []));
const SMOKE = argv.includes("--smoke");
const ROUNDS = Number(opts("--rounds")[0] ?? (SMOKE ? 1 : 5));
const SECONDS = Number(opts("--seconds")[0] ?? (SMOKE ? 1 : 3));
/** `NAME=DIR` or `NAME=DIR:VAR=value,VAR=value` (environment variables that server is started with). */
const TREES = opts("--tree").map((s) => {
  const eq = s.indexOf("=");
  const [dir, vars] = (eq > 0 ? s.slice(eq + 1) : s).split(":");
  const env = Object.fromEntries((vars ?? "").split(",").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
  return { name: eq > 0 ? s.slice(0, eq) : s, dir, env };
});
const RUNG5 = argv.includes("--rung5");
if (TREES.length === 0) {
  process.stderr.write("usage: bun scripts/bench-ab.ts --tree A=DIR [--tree B=DIR]… [--rung5] [--lanes chat-json,…] [--rounds N] [--seconds N]\n");
  process.exit(2);
}
interface Column {
  name: string;
  lane: Lane;
  mode: Mode;
}
/**
 * The Responses lanes again with Codex's recorded second turn as the request (`codex→chat`,
 * `codex-ws→chat`; test/fixtures/shared/clients/codex-tool-use-2.json, 47 KB, no `instructions`, 9
 * tools whose ~18 KB every response object of the reply echoes): a Codex-sized request, for A/Bs only
 * (scripts/bench's lanes are unchanged).
 */
const CODEX_TURN: Record<string, unknown> = await Bun.file(join(ROOT, "test", "fixtures", "shared", "clients", "codex-tool-use-2.json")).json();
const codexLanes = (lanes: Lane[]): Lane[] =>
  lanes.filter((l) => l.name.startsWith("responses")).map((l) => ({ ...l, name: l.name.replace("responses", "codex"), body: (stream: boolean, model: string) => ({ ...CODEX_TURN, model, stream }) }));
/**
 * The Responses lanes served natively (`responses-json`, `responses-stream`, `responses-ws→responses-stream`:
 * the openai provider's Responses endpoint, the native passthrough), for A/Bs only.
 */
const nativeResponsesLanes = (lanes: Lane[]): Lane[] =>
  lanes.filter((l) => l.name.startsWith("responses")).map((l) => ({ ...l, name: l.name.replace("→chat", "→responses"), kind: "native" as const, model: "gpt-bench" }));
/** Every lane and mode by its `--lanes` name: `chat-json`, `messages→chat-stream`, `responses-ws→chat-stream`, `codex→chat-stream`, … */
const ALL_COLUMNS = new Map<string, Column>(
  [...benchLanes(2), ...codexLanes(benchLanes(2)), ...nativeResponsesLanes(benchLanes(2))].flatMap((lane) =>
    (lane.modes ?? MODES).map((mode) => {
      const [from, to] = lane.name.split("→");
      const name = `${from === to ? from : lane.name}-${mode}`;
      return [name, { name, lane, mode }] as const;
    }),
  ),
);
const COLUMNS: Column[] = (opts("--lanes")[0] ?? "chat-json,messages-json").split(",").map((n) => {
  const c = ALL_COLUMNS.get(n);
  if (!c) throw new Error(`unknown lane ${n} (lanes: ${[...ALL_COLUMNS.keys()].join(", ")})`);
  return c;
});
const isWs = (c: Column) => c.lane.transport === "websocket";
/** One load run: the Responses WebSocket's load client on its lane; else wrk when installed, else the Bun load client (as scripts/bench and bench-floor.ts). */
const load = (c: Column, [url, body]: [string, string], seconds: number, dir: string) =>
  isWs(c) ? loadWs(url, body, seconds) : WRK ? loadWrk(url, body, seconds, dir) : loadBun(url, body, seconds);
/** One request, read to the end (on the WebSocket lane: one `response.create` on a socket of its own). */
async function once(c: Column, [url, body]: [string, string]): Promise<number> {
  if (!isWs(c)) return (await timedRequest(url, body)).status;
  const s = await BenchSocket.open(url);
  try {
    return (await s.send(body)).status;
  } finally {
    s.close();
  }
}

const THREADS = argv.includes("--threads");
/** `--latency N`: the concurrency-1 latency A/B with N requests per server, lane and round (0: the CPU A/B). */
const LATENCY = Number(opts("--latency")[0] ?? 0);
/** Seconds of load per server and lane before the rounds (the JIT's tiers take tens of seconds to settle). */
const WARM = Number(opts("--warm")[0] ?? (SMOKE ? 0 : 1));

/**
 * The request of a column to a server: the URL and the body (a `response.create` frame on a `ws://` URL
 * on the WebSocket lane); the floor rung gets the model without its provider prefix (as bench-floor.ts).
 */
function requestFor(key: string, c: Column, url: string): [string, string] {
  const stream = c.mode === "stream";
  const model = key === "rung5" ? c.lane.model.replace(/^[^/]+\//, "") : c.lane.model;
  const body = c.lane.body(stream, model);
  if (isWs(c)) return [url.replace(/^http/, "ws") + c.lane.path(stream, model), JSON.stringify({ type: "response.create", ...body })];
  return [url + c.lane.path(stream, model), JSON.stringify(body)];
}
const runsOn = (key: string, c: Column) => key !== "rung5" || (c.lane.kind === "native" && !isWs(c));

/**
 * `--latency`'s "direct" request of a column: the upstream's own endpoint of the client's format,
 * without the gateway's provider prefix; on the WebSocket lane the same request over HTTP (the
 * upstream has no WebSocket; scripts/bench compares that lane with the same call).
 */
function directFor(c: Column, upstreamUrl: string): [string, string] {
  if (!isWs(c)) return requestFor("rung5", c, upstreamUrl);
  const stream = c.mode === "stream";
  const model = c.lane.model.replace(/^[^/]+\//, "");
  return [upstreamUrl + c.lane.path(stream, model), JSON.stringify(c.lane.body(stream, model))];
}

/** `--latency`'s sockets on the WebSocket lane: one per URL, kept open (Codex keeps its socket), opened on first use. */
const keptSockets = new Map<string, Promise<BenchSocket>>();

/** One timed request of `--latency`: over HTTP, or one `response.create` on the server's kept socket. */
async function timedLatency(ws: boolean, [url, body]: [string, string]): Promise<Timed> {
  if (!ws) return timedRequest(url, body);
  let s = keptSockets.get(url);
  if (!s) keptSockets.set(url, (s = BenchSocket.open(url)));
  return (await s).send(body);
}

/** A server under test: its key (a tree's name, or `rung5`) and its process. */
interface Server {
  key: string;
  p: Proc;
}

/** Every server's key in `--tree` order, rung 5 last: the first round's start order, rotated in the later ones. */
const KEYS = [...TREES.map((t) => t.name), ...(RUNG5 ? ["rung5"] : [])];

const dir = mkdtempSync(join(tmpdir(), "switchyard-ab-"));
/** The servers running now (the keep-warm requests' targets; stopped at the end). */
let live: Server[] = [];
/** The server whose load run is being measured: the keep-warm requests leave it alone; `*`: every server (`--latency`'s requests). */
let measuring: string | undefined;

/** Starts one server (a tree's switchyard, or rung 5) with a data directory of its own named `tag`. */
async function startServer(key: string, upstreamUrl: string, tag: string): Promise<Server> {
  const d = join(dir, tag);
  mkdirSync(d);
  if (key === "rung5") return { key, p: await startScript("rung5", join(ROOT, "scripts/lib/floor-server.ts"), ["5", d], { UPSTREAM: upstreamUrl, ...SERVICE_ENV }) };
  const t = TREES.find((x) => x.name === key)!;
  return { key, p: await startSwitchyard(["bun", join(t.dir, "src/main.ts")], upstreamUrl, d, t.name, undefined, t.env) };
}

/**
 * Starts the servers one after another in `order` (each joins {@link live} at once), then warms them:
 * 100 requests of every lane each, then {@link WARM} s of load per server and lane.
 */
async function startAndWarm(order: string[], upstreamUrl: string, tag: string): Promise<Server[]> {
  const started: Server[] = [];
  for (const key of order) {
    const s = await startServer(key, upstreamUrl, `${key}${tag}`);
    started.push(s);
    live.push(s);
  }
  for (const c of COLUMNS)
    for (const s of started) {
      if (!runsOn(s.key, c)) continue;
      for (let k = 0; k < (SMOKE ? 2 : 100); k++) {
        const status = await once(c, requestFor(s.key, c, s.p.url));
        if (status !== 200) throw new Error(`${s.key} on ${c.name}: HTTP ${status}`);
      }
    }
  if (WARM > 0) for (const c of COLUMNS) for (const s of started) if (runsOn(s.key, c)) await load(c, requestFor(s.key, c, s.p.url), WARM, dir);
  return started;
}

/** The median (the mean of the middle two of an even count; NaN when empty). */
function mid(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = xs.toSorted((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The rounds of either A/B: each round starts the servers anew, in the order of {@link KEYS} rotated by
 * the round (a,b then b,a; three servers take each place once in three rounds), as the server started
 * first read faster whichever tree it was (docs/performance.md items 147, 153 and 170); warms them
 * ({@link startAndWarm}), hands them to `measure` (the round's 0-based index too; it returns the round's
 * line for stderr) and stops them. Returns each round's start order.
 */
async function restartedRounds(upstreamUrl: string, measure: (servers: Server[], round: number) => Promise<string>): Promise<string[][]> {
  const orders: string[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = rotated(KEYS, r);
    orders.push(order);
    const servers = await startAndWarm(order, upstreamUrl, `-r${r + 1}`);
    const line = await measure(servers, r);
    for (const s of servers) await stopProc(s.p);
    live = live.filter((s) => !servers.includes(s));
    process.stderr.write(`round ${r + 1}/${ROUNDS} (started ${order.join(",")})  ${line}\n`);
  }
  return orders;
}

/** The distinct start orders (`a,b`) of {@link restartedRounds}' rounds, each with its rounds (0-based). */
function startOrders(orders: string[][]): Map<string, number[]> {
  const byOrder = new Map<string, number[]>();
  orders.forEach((o, r) => byOrder.set(o.join(","), [...(byOrder.get(o.join(",")) ?? []), r]));
  return byOrder;
}

/**
 * Prints what the start order moved, after either A/B's table: per start order each server's figure minus
 * the first tree's (µs, the median of that order's rounds), and per lane the server started last minus
 * the one started first (µs, median (min … max) of the rounds: the start order's bias when the builds
 * are alike). `values`: by key and column, the figure of each round (NaN where the server does not run
 * the lane); `toUs`: its factor to µs; `what`: its name in the heading ("added p50").
 */
function printStartOrders(values: Map<string, number[][]>, orders: string[][], toUs: number, what: string): void {
  const ref = TREES[0].name;
  const us = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(1)}`;
  /** A server's figure minus the first tree's, µs, per round. */
  const diffs = (key: string, ci: number) => values.get(key)![ci].map((x, r) => (x - values.get(ref)![ci][r]) * toUs);
  console.log(`\nby start order (µs, median of that order's rounds): each server's ${what} minus ${ref}'s`);
  for (const [o, rs] of startOrders(orders)) {
    const cells = COLUMNS.map((c, ci) => `${c.name} ` + KEYS.filter((k) => k !== ref && runsOn(k, c)).map((k) => `${k} ${us(mid(rs.map((r) => diffs(k, ci)[r])))}`).join(" "));
    console.log(`started ${o} (round${rs.length > 1 ? "s" : ""} ${rs.map((r) => r + 1).join(", ")}): ${cells.join("  ")}`);
  }
  const lastFirst = COLUMNS.map((c, ci) => {
    const xs = orders.map((o, r) => {
      const on = o.filter((k) => runsOn(k, c));
      return (values.get(on.at(-1)!)![ci][r] - values.get(on[0])![ci][r]) * toUs;
    });
    return `${c.name} ${us(mid(xs))} (${us(Math.min(...xs))} … ${us(Math.max(...xs))})`;
  });
  console.log(`started last minus started first (µs, median (min … max) of the rounds; the start order's bias when the builds are alike): ${lastFirst.join("  ")}`);
}

/**
 * `--latency`: per round the servers are started anew in a rotated order ({@link restartedRounds}: the
 * server started first used to read 7–48 µs faster whichever tree it was). Then per lane
 * {@link LATENCY} requests to the upstream directly and to each server, one at a time in a
 * {@link balancedSequence} (each target follows every other equally often); prints the added p50 (server
 * p50 minus direct p50 of the same round), each server's difference to the first tree's (the mean of
 * the start orders' medians, with the rounds' range), then what the start order moved ({@link printStartOrders}).
 */
async function latencyRounds(upstreamUrl: string): Promise<void> {
  /** by key and column: the added p50 of each round (NaN where the server does not run the lane) */
  const added = new Map<string, number[][]>(KEYS.map((k) => [k, COLUMNS.map(() => [])]));
  const direct: number[][] = COLUMNS.map(() => []);
  const orders = await restartedRounds(upstreamUrl, async (servers) => {
    measuring = "*";
    const line: string[] = [];
    for (let ci = 0; ci < COLUMNS.length; ci++) {
      const c = COLUMNS[ci];
      const ss = KEYS.flatMap((k) => servers.filter((s) => s.key === k && runsOn(k, c)));
      const targets = [{ key: "direct", req: directFor(c, upstreamUrl) }, ...ss.map((s) => ({ key: s.key, req: requestFor(s.key, c, s.p.url) }))];
      const totals = new Map<string, number[]>(targets.map((t) => [t.key, []]));
      const seq = balancedSequence(targets.length);
      const cycles = Math.ceil(LATENCY / Math.max(1, targets.length - 1));
      for (let k = 0; k < cycles * seq.length; k++) {
        const t = targets[seq[k % seq.length]];
        const x = await timedLatency(isWs(c) && t.key !== "direct", t.req);
        if (x.status !== 200) throw new Error(`${t.key} on ${c.name}: HTTP ${x.status}`);
        totals.get(t.key)!.push(x.total);
      }
      const d = median(totals.get("direct")!);
      direct[ci].push(d);
      for (const k of KEYS) added.get(k)![ci].push(totals.has(k) ? median(totals.get(k)!) - d : NaN);
      line.push(`${c.name}: direct ${d.toFixed(3)} ` + ss.map((s) => `${s.key} +${added.get(s.key)![ci].at(-1)!.toFixed(3)}`).join(" "));
    }
    for (const s of keptSockets.values()) (await s).close();
    keptSockets.clear();
    measuring = undefined;
    return line.join(" | ");
  });
  const ref = TREES[0].name;
  const range = (xs: number[], f = 3) => `${median(xs).toFixed(f)} (${Math.min(...xs).toFixed(f)}–${Math.max(...xs).toFixed(f)})`;
  const byOrder = startOrders(orders);
  /** A server's added p50 minus the first tree's, µs, per round. */
  const diffs = (key: string, ci: number) => added.get(key)![ci].map((x, r) => (x - added.get(ref)![ci][r]) * 1000);
  console.log(
    `\n${new Date().toISOString().slice(0, 16)} UTC, concurrency 1, ${ROUNDS} rounds of ${LATENCY} requests per target and lane, the servers started anew each round in a rotated order (${[...byOrder.keys()].join("; ")}), the requests in an order where each target follows every other equally often; ms, median (min–max) of the rounds: direct p50, each server's added p50 [its difference to ${ref}'s, µs: the mean of the start orders' medians (min–max of the rounds)]`,
  );
  COLUMNS.forEach((c, ci) => {
    const cells = KEYS.filter((k) => runsOn(k, c)).map((k) => {
      const xs = diffs(k, ci);
      const estimate = mean([...byOrder.values()].map((rs) => mid(rs.map((r) => xs[r]))));
      return `${k} +${range(added.get(k)![ci])} [${(estimate === 0 ? 0 : estimate).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})]`;
    });
    console.log(`${c.name.padEnd(22)} direct ${range(direct[ci])}  ${cells.join("  ")}`);
  });
  printStartOrders(added, orders, 1000, "added p50");
}

/**
 * The CPU A/B's rounds (item 170): per round the servers are started anew ({@link restartedRounds}), then
 * per lane each server gets one load run of {@link SECONDS} s ({@link load}) while the others wait (and
 * get the keep-warm requests), its CPU over the run divided by the requests it served. The servers take
 * their runs in `--tree` order rotated by the lane and by the round divided by the servers' count, so
 * that the start order and the place in the runs vary apart (two servers: a,b a,b b,a b,a against the
 * start orders a,b b,a a,b b,a: each pair once in four rounds). Prints each server's median CPU µs per
 * request (min–max) and the median of its rounds' ratios to the first tree's, then what the start order
 * moved ({@link printStartOrders}).
 */
async function cpuRounds(upstreamUrl: string): Promise<void> {
  /** by key and column: CPU µs per request of each round (NaN where the server does not run the lane) */
  const cpu = new Map<string, number[][]>(KEYS.map((k) => [k, COLUMNS.map(() => [])]));
  const ratio = new Map<string, number[][]>(KEYS.map((k) => [k, COLUMNS.map(() => [])]));
  /** by server and column: thread name → µs per request per round */
  const byThread = new Map<string, Map<string, number[]>[]>(KEYS.map((k) => [k, COLUMNS.map(() => new Map())]));
  let errors = 0;
  const orders = await restartedRounds(upstreamUrl, async (servers, r) => {
    const line: string[] = [];
    for (let ci = 0; ci < COLUMNS.length; ci++) {
      const c = COLUMNS[ci];
      const ss = KEYS.flatMap((k) => servers.filter((s) => s.key === k && runsOn(k, c)));
      const round = new Map<string, number>();
      for (const s of rotated(ss, Math.floor(r / KEYS.length) + ci)) {
        measuring = s.key;
        const t0 = THREADS ? threadsByName(s.p.pid) : undefined;
        const f0 = THREADS ? minorFaults(s.p.pid) : 0;
        const c0 = cpuUs(s.p.pid);
        const res = await load(c, requestFor(s.key, c, s.p.url), SECONDS, dir);
        const us = (cpuUs(s.p.pid) - c0) / Math.max(1, res.requests);
        if (t0) {
          const m = byThread.get(s.key)![ci];
          for (const [name, v] of threadsByName(s.p.pid)) {
            const xs = m.get(name) ?? [];
            xs.push((v - (t0.get(name) ?? 0)) / Math.max(1, res.requests));
            m.set(name, xs);
          }
          m.set("(minor page faults)", [...(m.get("(minor page faults)") ?? []), (minorFaults(s.p.pid) - f0) / Math.max(1, res.requests)]);
        }
        measuring = undefined;
        errors += res.errors;
        round.set(s.key, us);
      }
      const ref = round.get(TREES[0].name)!;
      for (const k of KEYS) {
        cpu.get(k)![ci].push(round.get(k) ?? NaN);
        if (round.has(k)) ratio.get(k)![ci].push(round.get(k)! / ref);
      }
      line.push(`${c.name}: ` + ss.map((s) => `${s.key} ${round.get(s.key)!.toFixed(0)}`).join(" "));
    }
    return line.join(" | ");
  });
  const byOrder = startOrders(orders);
  console.log(
    `\n${new Date().toISOString().slice(0, 16)} UTC, ${WRK ? "wrk -t1 -c32" : "Bun load client (32 loops)"}, ${ROUNDS} rounds of ${SECONDS} s, the servers started anew each round in a rotated order (${[...byOrder.keys()].join("; ")}), load errors ${errors}; CPU µs per request, median (min–max) [× ${TREES[0].name}, median of the rounds' ratios]`,
  );
  for (const k of KEYS) {
    const cells = COLUMNS.map((c, ci) => {
      const xs = cpu.get(k)![ci].filter((x) => !Number.isNaN(x));
      if (xs.length === 0) return `${c.name} -`;
      return `${c.name} ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}) [${median(ratio.get(k)![ci]).toFixed(3)}×]`;
    });
    console.log(`${k.padEnd(10)} ${cells.join("  ")}`);
  }
  if (THREADS) {
    console.log("\nby thread (µs per request, median of the rounds; minor page faults per request):");
    for (const k of KEYS)
      COLUMNS.forEach((c, ci) => {
        const m = byThread.get(k)![ci];
        if (m.size === 0) return;
        console.log(`${k.padEnd(10)} ${c.name}: ` + [...m].map(([name, xs]) => [name, median(xs)] as const).filter(([, v]) => v >= 0.5).sort((a, b) => b[1] - a[1]).map(([name, v]) => `${name} ${v.toFixed(1)}`).join(", "));
      });
  }
  printStartOrders(cpu, orders, 1, "CPU per request");
}

const procs: Proc[] = [];
try {
  const upstream = await startUpstream();
  procs.push(upstream);
  let turn = 0;
  const keepWarm = setInterval(() => {
    const c = COLUMNS[turn++ % COLUMNS.length];
    if (measuring !== "*") for (const s of live) if (s.key !== measuring && runsOn(s.key, c)) void once(c, requestFor(s.key, c, s.p.url)).catch(() => {});
  }, 3000);

  if (LATENCY > 0) await latencyRounds(upstream.url);
  else await cpuRounds(upstream.url);
  clearInterval(keepWarm);
} finally {
  for (const s of live) await stopProc(s.p);
  for (const p of procs.reverse()) await stopProc(p);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
