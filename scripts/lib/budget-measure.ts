#!/usr/bin/env bun
/**
 * The measuring half of scripts/bench-budget.ts, run by it as a child process with
 * `BUN_JSC_logGC=1` so that every garbage collection's pauses are logged on stderr. Each timed run is
 * bracketed by `@@budget <id> start` / `@@budget <id> end` lines on the same stream; the parent adds up
 * the pauses (`p=…ms`) logged between a run's brackets and takes them out of that run's CPU, so every
 * row is its work without the collections it happened to meet, and GC is a row of its own.
 *
 * CPU is the JavaScript thread's own (CLOCK_THREAD_CPUTIME_ID, scripts/lib/threads.ts), not the process's: JavaScriptCore's
 * JIT, GC helper and heap-block warm-up threads and mimalloc's scavenger work on other cores at the same time and are
 * measured as rows of their own over the whole-pipeline runs (scripts/lib/threads.ts).
 *
 * Prints one JSON document on stdout ({@link MeasureOutput}). Usage (normally only through
 * scripts/bench-budget.ts): BUN_JSC_logGC=1 bun scripts/lib/budget-measure.ts [--quick]
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guard, parseJsonObject, readBody } from "../../pipeline/guard.ts";
import { newContext, type RequestContext } from "../../pipeline/context.ts";
import { resolveModel, type RoutingTable, type Target } from "../../pipeline/resolve.ts";
import { pickAccount } from "../../pipeline/pick.ts";
import { translate } from "../../pipeline/translate.ts";
import { ClientAbort, executeCall, type Executor, type UpstreamReply } from "../../pipeline/execute.ts";
import { commitReply, replyDriverFor } from "../../pipeline/commit.ts";
import { runAttempts } from "../../pipeline/attempt-loop.ts";
import { affinityHints } from "../../pipeline/affinity.ts";
import { createGateway } from "../../pipeline/gateway.ts";
import { createExecutors } from "../../src/providers/index.ts";
import type { AttemptTrace, RouteTrace, UsageRecord } from "../../pipeline/ports.ts";
import { createServer } from "../../src/http/server.ts";
import { realClock } from "../../src/clock.ts";
import { SubscriptionHealth } from "../../src/accounts/credentials.ts";
import { RequestAccounting } from "../../src/limits/accounting.ts";
import { MemoryKeyCounters } from "../../src/limits/counters.ts";
import { loadPriceTable } from "../../src/pricing/prices.ts";
import { PendingWrites } from "../../src/store/pending.ts";
import { SQLITE_EARLY_FLUSH_AT } from "../../src/store/sqlite/store.ts";
import { LineBuffer } from "../../src/log-lines.ts";
import { requestFinishedEvent } from "../../src/events/request-finished.ts";
import { startRawPipe } from "../bench-pipe.ts";
import { floorApp, floorHandler } from "./floor-server.ts";
import { fakeFetch, LANES, runPipelineLane, startPipelineBenchApp } from "../bench-pipeline.ts";
import { guardedContext } from "./context.ts";
import { jsThreadCpuUs, threadCpu, threadDelta, type ThreadKind } from "./threads.ts";

/** One timed run: its bracket id, JS-thread CPU µs per call (GC pauses included), calls made. */
export interface Run {
  id: string;
  us: number;
  n: number;
}
/** One whole-pipeline run: bracket id, requests, CPU µs per request by thread kind (JS thread: GC included). */
export interface PipelineRun {
  id: string;
  n: number;
  threads: Record<ThreadKind, number>;
}
/**
 * What the child prints: per lane, the runs of every microbenchmark and of the whole pipeline. On a lane
 * with a floor rung, `runs` also holds the raw pipe and that rung in process in paired rounds
 * (`paired:raw`, `paired:floor`: JS-thread µs per request, GC pauses in) and their other threads' CPU
 * (`threads:raw`, `threads:floor`: µs per request, GC helper, warm-up, JIT and other threads).
 */
export interface MeasureOutput {
  iterations: number;
  rounds: number;
  pipelineRequests: number;
  lanes: Array<{ name: string; kind: "native" | "translated"; runs: Record<string, Run[]>; pipeline: PipelineRun[] }>;
}

/**
 * The lanes of the budget: every lane scripts/bench judges against the CPU target (each HTTP lane × mode
 * with a raw pipe; the WebSocket lane has none), native first. scripts/bench-pipeline.ts lane name, stream
 * flag, native or translated, and the floor's top rung on the lane (scripts/lib/floor-server.ts: 5 native,
 * 6 translated; null where the floor has no server for the lane: Responses, and Gemini translated to Chat,
 * whose rung 6 would need a translation of its own).
 */
export const BUDGET_LANES = [
  { name: "chat→chat json", lane: "chat", stream: false, kind: "native", floor: 5 },
  { name: "chat→chat stream", lane: "chat", stream: true, kind: "native", floor: 5 },
  { name: "messages→messages json", lane: "messages", stream: false, kind: "native", floor: 5 },
  { name: "messages→messages stream", lane: "messages", stream: true, kind: "native", floor: 5 },
  { name: "gemini→gemini json", lane: "gemini", stream: false, kind: "native", floor: 5 },
  { name: "gemini→gemini stream", lane: "gemini", stream: true, kind: "native", floor: 5 },
  { name: "messages→chat json", lane: "messages-chat", stream: false, kind: "translated", floor: 6 },
  { name: "messages→chat stream", lane: "messages-chat", stream: true, kind: "translated", floor: 6 },
  { name: "responses→chat json", lane: "responses-chat", stream: false, kind: "translated", floor: null },
  { name: "responses→chat stream", lane: "responses-chat", stream: true, kind: "translated", floor: null },
  { name: "gemini→chat json", lane: "gemini-chat", stream: false, kind: "translated", floor: null },
  { name: "gemini→chat stream", lane: "gemini-chat", stream: true, kind: "translated", floor: null },
] as const;

const mark = (id: string, what: "start" | "end") => process.stderr.write(`@@budget ${id} ${what}\n`);
const jsCpu = jsThreadCpuUs;

/** Reads a body to its end chunk by chunk; hands each chunk to `each`. */
async function drainChunks(body: ReadableStream<Uint8Array> | null, each?: (c: Uint8Array) => void) {
  if (!body) return;
  const reader = body.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) return;
    each?.(r.value);
  }
}

/** Replaces `obj[name]` with `fn`; returns what puts the original back. */
function shadow(obj: Record<string, unknown>, name: string, fn: unknown): () => void {
  const own = Object.hasOwn(obj, name);
  const orig = obj[name];
  obj[name] = fn;
  return () => {
    if (own) obj[name] = orig;
    else delete obj[name];
  };
}

async function main() {
  const QUICK = process.argv.includes("--quick");
  const ITER = QUICK ? 200 : 3000;
  const ROUNDS = QUICK ? 1 : 3;
  const PIPELINE_N = QUICK ? 300 : 5000;
  /** Rounds and calls per run of the paired measurements ({@link pairedRounds}). */
  const PAIR_ROUNDS = QUICK ? 2 : 15;
  const PAIR_CALLS = QUICK ? 50 : 600;

  /** `ITER / 5` warm-up calls, then `ROUNDS` bracketed runs of `ITER` sequential calls. */
  async function cpuPerCall(key: string, fn: () => unknown): Promise<Run[]> {
    for (let i = 0; i < Math.max(20, ITER / 5); i++) await fn();
    const runs: Run[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const id = `${key}#${r}`;
      mark(id, "start");
      const c0 = jsCpu();
      for (let i = 0; i < ITER; i++) await fn();
      const us = jsCpu() - c0;
      mark(id, "end");
      runs.push({ id, us: us / ITER, n: ITER });
    }
    return runs;
  }

  /**
   * {@link cpuPerCall} for measurements whose difference makes a row: their rounds alternate (the order
   * reversed every other round), so a drift of the machine or of the JIT between them cancels out
   * instead of landing in the row (measured one after the other, the executor row came out at −8 to
   * −12 µs on stream lanes and the attempt loop's, which subtracted it, at +17 to +24). `extra(r)`, when
   * given, runs once in round `r` too (first in even rounds, last in odd ones): the whole-pipeline run.
   */
  async function cpuPerCallInterleaved(fns: Record<string, () => unknown>, extra?: (round: number) => Promise<void>): Promise<Record<string, Run[]>> {
    const names = Object.keys(fns);
    for (const name of names) for (let i = 0; i < Math.max(20, ITER / 5); i++) await fns[name]!();
    const runs: Record<string, Run[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      if (extra && r % 2 === 0) await extra(r);
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        const fn = fns[name]!;
        const id = `${key(name)}#${r}`;
        mark(id, "start");
        const c0 = jsCpu();
        for (let i = 0; i < ITER; i++) await fn();
        const us = jsCpu() - c0;
        mark(id, "end");
        runs[name]!.push({ id, us: us / ITER, n: ITER });
      }
      if (extra && r % 2 === 1) await extra(r);
    }
    return runs;
  }
  let key = (name: string) => name;

  /**
   * Short runs of the measurements whose difference makes a row on its own (the attempt loop, the gateway
   * wrapper, the app's hooks), in many alternating rounds: each round runs every one of `fns` for
   * `PAIR_CALLS` calls, in an order rotated by the round and reversed every other round, bracketed as
   * `<key>~<round>`. The row is then the median over the rounds of the difference within a round
   * (scripts/bench-budget.ts `paired`), not the difference of two medians over 3 long rounds: a burst of
   * other work on the machine, or a drift of the JIT, meets both sides of one round alike and the median
   * drops the rounds it hit unevenly (item 173: on a machine at load ~1.6 the 3-round difference read the
   * attempt loop at −17 … +13 µs across lanes, a 41-round paired harness at 0.2–2.0 ± 4 µs).
   */
  async function pairedRounds(fns: Record<string, () => unknown>): Promise<Record<string, Run[]>> {
    const names = Object.keys(fns);
    const runs: Record<string, Run[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < PAIR_ROUNDS; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]!);
      if (r % 2 === 1) order.reverse();
      for (const name of order) {
        const fn = fns[name]!;
        const id = `${key(name)}~${r}`;
        mark(id, "start");
        const c0 = jsCpu();
        for (let i = 0; i < PAIR_CALLS; i++) await fn();
        const us = jsCpu() - c0;
        mark(id, "end");
        runs[name]!.push({ id, us: us / PAIR_CALLS, n: PAIR_CALLS });
      }
    }
    return runs;
  }

  const bench = await startPipelineBenchApp();
  const { app } = bench;
  const cfg = app.config();
  const table: RoutingTable = { providers: cfg.providers, aliases: cfg.aliases, combos: cfg.combos as never, accounts: app.registry };
  const guardDeps = { keys: app.store, settings: () => ({ requireApiKey: false, maxBodyBytes: 32 * 1024 * 1024 }) };
  const health = new SubscriptionHealth(app.registry, app.credentials, realClock);
  const accounting = new RequestAccounting({ pricing: () => cfg.settings.pricing, priceTable: await loadPriceTable(), counters: new MemoryKeyCounters() });
  const devNull = openSync("/dev/null", "w");
  const logBuffer = new LineBuffer((bytes, done) => {
    writeSync(devNull, bytes);
    done();
  });

  // The raw pipe's own handler, called in process with the in-process upstream as its fetch.
  const realFetch = globalThis.fetch;
  const rawServer = startRawPipe("http://bench.invalid");
  // The app's HTTP framework with a gateway that answers at once, and the same gateway behind a bare fetch function.
  const instant = { handle: async () => new Response("{}", { headers: { "content-type": "application/json" } }) };
  const framework = createServer({ gateway: instant, models: () => [], model: () => undefined, health: () => ({ ok: true, db: "ok" }), browser: () => ({ bindHost: "127.0.0.1", allowedHosts: [], corsOrigins: [] }) });
  const bareFetch = (_request: Request) => instant.handle();
  // The floor's top rungs (scripts/lib/floor-server.ts: its handler on Elysia, as rung 5 and 6 serve it over
  // the wire), called in process like the raw pipe, with the in-process upstream as their fetch.
  const floorDir = mkdtempSync(join(tmpdir(), "switchyard-budget-floor-"));
  const floorApps = new Map<number, { handle(request: Request): Promise<Response> }>();
  for (const rung of [5, 6]) {
    mkdirSync(join(floorDir, String(rung)));
    floorApps.set(rung, await floorApp(floorHandler(rung, "http://bench.invalid", join(floorDir, String(rung))), () => "127.0.0.1"));
  }

  const out: MeasureOutput = { iterations: ITER, rounds: ROUNDS, pipelineRequests: PIPELINE_N, lanes: [] };
  // Every lane's whole pipeline once before any lane is measured, so that the code the lanes share (the
  // guard, the commit point, the store and its flush) is compiled and warm when the first lane is
  // measured, and not charged to that lane alone (docs/performance.md item 296: chat→chat json, measured
  // first, read its JIT row 18 µs and its store flushes 5.7 µs a row against 2.4–2.7 on the other lanes).
  for (const bl of BUDGET_LANES) await runPipelineLane(app, LANES[bl.lane]!, bl.stream, Math.min(PIPELINE_N, 1000), 32);
  for (const bl of BUDGET_LANES) {
    const lane = LANES[bl.lane]!;
    const body = lane.body(bl.stream) as Record<string, unknown>;
    const text = JSON.stringify(body);
    // Gemini names the model and the stream mode in the URL (SPEC 2.1), as scripts/bench-pipeline.ts sends it.
    const url = "http://127.0.0.1" + lane.path + (lane.gemini ? (bl.stream ? ":streamGenerateContent?alt=sse" : ":generateContent") : "");
    const inURL = lane.gemini ? { pathModel: lane.path.slice(lane.path.lastIndexOf("/") + 1), pathStream: bl.stream } : {};
    /** What the server hands the gateway for a request of this lane. */
    const incoming = (request: Request) => ({ request, endpoint: lane.endpoint, peer: "127.0.0.1", ...inURL });
    // Content-Length as scripts/bench-pipeline.ts's requests carry it: the guard reads such a body natively
    // (readBody), without one through a JS stream reader (before 2026-12-02 the body row measured that path).
    const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01", host: "127.0.0.1", "content-length": String(Buffer.byteLength(text)) };
    const request = () => new Request(url, { method: "POST", headers, body: text });
    const runs: Record<string, Run[]> = {};
    const k = (name: string) => `${bl.name}|${name}`;
    key = k;

    globalThis.fetch = fakeFetch;
    const rawCheck = await rawServer.fetch(request());
    if (rawCheck.status !== 200) throw new Error(`the raw pipe answered ${rawCheck.status} on ${bl.name}`);
    const frameworkCheck = await framework.handle(request());
    if (frameworkCheck.status !== 200) throw new Error(`the framework answered ${frameworkCheck.status} on ${bl.name}: ${await frameworkCheck.text()}`);
    const rawOnce = async () => (await rawServer.fetch(request())).arrayBuffer();
    runs.raw = await cpuPerCall(k("raw"), rawOnce);
    const floor = bl.floor === null ? undefined : floorApps.get(bl.floor)!;
    if (floor) {
      // The floor's top rung against the raw pipe: what the floor's mandatory work costs in process
      // (scripts/bench-budget.ts splits its over-the-wire row with it). JS thread in paired rounds (the
      // difference is the figure); the other threads over longer interleaved runs (/proc counts them in
      // 10 ms ticks).
      const floorCheck = await floor.handle(request());
      if (floorCheck.status !== 200) throw new Error(`the floor's rung ${bl.floor} answered ${floorCheck.status} on ${bl.name}: ${await floorCheck.text()}`);
      const floorOnce = async () => (await floor.handle(request())).arrayBuffer();
      for (let i = 0; i < Math.max(20, ITER / 5); i++) await floorOnce();
      for (const [name, r] of Object.entries(await pairedRounds({ raw: rawOnce, floor: floorOnce }))) runs[`paired:${name}`] = r;
      const sides = { raw: rawOnce, floor: floorOnce };
      runs["threads:raw"] = [];
      runs["threads:floor"] = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (const name of r % 2 === 0 ? (["raw", "floor"] as const) : (["floor", "raw"] as const)) {
          const n = 3 * ITER;
          const t0 = threadCpu();
          for (let i = 0; i < n; i++) await sides[name]();
          const d = threadDelta(t0, threadCpu());
          runs[`threads:${name}`]!.push({ id: `${k(`threads:${name}`)}#${r}`, us: (d.gc + d.warmup + d.jit + d.other) / n, n });
        }
      }
    }
    globalThis.fetch = realFetch;

    runs.viaFramework = await cpuPerCall(k("viaFramework"), async () => (await framework.handle(request())).arrayBuffer());
    runs.viaBare = await cpuPerCall(k("viaBare"), async () => (await bareFetch(request())).arrayBuffer());

    const bodyRead = async () => {
      const r = await readBody(request(), 32 * 1024 * 1024);
      if (r.ok) parseJsonObject(r.value);
    };
    runs.bodyRead = await cpuPerCall(k("bodyRead"), bodyRead);
    const guarded = async (): Promise<RequestContext> => {
      const ctx = newContext(incoming(request()), Date.now());
      const g = await guard(ctx, guardDeps);
      if (g instanceof Response) throw new Error(`the guard refused the ${bl.name} request: ${g.status}`);
      return g;
    };
    // Every measurement from here to the bookkeeping rows, and the whole-pipeline runs, is only registered
    // in `timed` and run below in the same rounds (cpuPerCallInterleaved): most rows, the remainder, the
    // gateway wrapper and "32 concurrent requests" are differences of these, and measured in separate
    // phases a drift between the phases landed in those rows (docs/performance.md item 84).
    const timed: Record<string, () => unknown> = {};
    timed.guardAll = guarded;

    const ctx0 = await guarded();
    let target: Target | undefined;
    timed.route = () => {
      const res = resolveModel(ctx0.requestedModel, table);
      if ("kind" in res) throw new Error(res.message);
      const targets = app.order.forRequest(ctx0, res);
      target = targets[0]!;
      pickAccount(app.registry, target, new Set(), {});
    };
    timed.route(); // sets `target`, which the set-up below needs
    const picked = pickAccount(app.registry, target!, new Set(), {});
    if (!picked.account) throw new Error(`no account picked for ${bl.name}`);
    const account = picked.account;

    const freshCtx = () => guardedContext(lane.endpoint, body, { path: lane.path, ...inURL }, undefined, Date.now());
    // The affinity key (SPEC 2.4 X-Switchyard-Cache: session header, else the conversation fingerprint) is
    // read once per request, after translate as in the attempt loop (a translated lane's hub is parsed then).
    // Timed on its own over contexts made and translated untimed (each call new pick hints, so the key is
    // computed every time): as a difference of two fresh-context runs (until item 117) a key of about 0.5 µs
    // drowned in their ~30 µs (the 07:03 table of 2026-12-03 read −11.3 … 1.7 µs).
    const keyContexts = Array.from({ length: 256 }, () => {
      const c = freshCtx();
      translate(c, target!, "strip_with_warning");
      return c;
    });
    let keyTurn = 0;
    Object.assign(timed, {
      ctxOnly: freshCtx,
      withTranslate: () => translate(freshCtx(), target!, "strip_with_warning"),
      affinityKey: () => affinityHints(keyContexts[keyTurn++ & 255]!, true).affinityKey,
    });
    const translated = translate(ctx0, target!, "strip_with_warning");
    if ("kind" in translated) throw new Error(translated.message);

    const upstreamPath = { "anthropic-messages": "/v1/messages", gemini: `/v1beta/models/${target!.model}:${translated.upstreamStream ? "streamGenerateContent" : "generateContent"}`, "openai-responses": "/v1/responses", "openai-chat": "/v1/chat/completions" }[translated.upstreamFormat];
    const upstreamBody = typeof translated.body === "string" ? translated.body : new TextDecoder().decode(translated.body);
    const replyNow = async (): Promise<UpstreamReply> => {
      const res = await fakeFetch("http://bench.invalid" + upstreamPath, { method: "POST", body: upstreamBody });
      return { status: res.status, headers: res.headers, body: res.body };
    };
    const executor: Executor = { send: replyNow };
    // The provider's executor (src/providers/index.ts: the upstream URL, its headers, the fetch call) around
    // the in-process upstream, measured with the executor rows against that upstream alone (`sendOnly`, which
    // is the harness's fake server: scripts/bench-pipeline.ts `fakeFetch`; the raw pipe pays the same).
    const providerExecutor = createExecutors(fakeFetch, app.credentials);
    const call = { provider: target!.provider, account, model: target!.model, body: translated.body, stream: bl.stream, upstreamFormat: translated.upstreamFormat, clientFormat: ctx0.clientFormat, clientHeaders: ctx0.request.headers };
    // A fresh parent signal per call on both sides (a request's own signal; one shared signal would pile up listeners).
    Object.assign(timed, {
      sendOnly: async () => {
        void new AbortController().signal;
        await drainChunks((await replyNow()).body);
      },
      viaExecute: async () => drainChunks((await executeCall(executor, call, new AbortController().signal, 30_000)).reply.body),
      viaProvider: async () => drainChunks((await providerExecutor(target!.provider).send({ ...call, signal: new AbortController().signal })).body),
      viaDriver: async () => {
        const reply = await replyNow();
        const driver = replyDriverFor(ctx0, target!.provider, translated, reply);
        await drainChunks(reply.body, (c) => driver.push(c));
        driver.end();
      },
    });

    // The commit point and the reply stream it builds around the driver, read by a client to the end.
    const commitDeps = { clock: realClock, pool: app.registry, health, finish: () => {} };
    const attemptTrace = (): AttemptTrace => ({ target: target!.label, providerId: target!.provider.id, model: target!.model, accountId: account.id, startMs: 0 });
    timed.viaCommit = async () => {
      const reply = await replyNow();
      const controller = new AbortController();
      const committed = await commitReply(
        ctx0,
        {
          target: target!,
          account,
          translated,
          reply,
          controller,
          clientAbort: new ClientAbort(controller, ctx0.signal),
          started: Date.now(),
          trace: attemptTrace(),
          attempts: 1,
          fallback: false,
          hints: {},
          release: () => {},
          traceText: (text) => text,
          secrets: () => [],
          fail: () => {
            throw new Error(`the ${bl.name} reply failed at the commit point`);
          },
        },
        commitDeps,
      );
      if (!(committed instanceof Response)) throw new Error(committed.error.message);
      await committed.arrayBuffer();
    };
    // The attempt loop around all of it (pick, translate, execute, commit), on a fresh context each time,
    // against the same stages called one after the other by hand (same hints, so the same affinity key
    // read): the difference is the loop's own work (trace entry, slot, hints, bookkeeping of the attempt).
    const attemptDeps = { pool: app.registry, health, executorFor: () => executor, clock: realClock, settings: () => ({ maxAttempts: 8, precommitDeadlineMs: 60_000 }), finish: () => {} };
    Object.assign(timed, {
      viaAttempts: async () => {
        const res = await runAttempts(freshCtx(), [target!], { portability: "strip_with_warning", cacheAffinity: true }, attemptDeps);
        if (res.status !== 200) throw new Error(`the attempt loop answered ${res.status} on ${bl.name}`);
        await res.arrayBuffer();
      },
      viaStages: async () => {
        const ctx = freshCtx();
        const hints = affinityHints(ctx, true);
        const acc = pickAccount(app.registry, target!, new Set(), hints).account!;
        const tr = translate(ctx, target!, "strip_with_warning");
        if ("kind" in tr) throw new Error(tr.message);
        const { reply, controller, clientAbort } = await executeCall(executor, { ...call, account: acc, body: tr.body, stream: tr.upstreamStream, clientHeaders: ctx.request.headers }, ctx.signal, 30_000);
        const committed = await commitReply(
          ctx,
          { target: target!, account: acc, translated: tr, reply, controller, clientAbort, started: Date.now(), trace: attemptTrace(), attempts: 1, fallback: false, hints, release: () => {}, traceText: (text) => text, secrets: () => [], fail: () => {
            throw new Error(`the ${bl.name} reply failed at the commit point`);
          } },
          commitDeps,
        );
        if (!(committed instanceof Response)) throw new Error(committed.error.message);
        await committed.arrayBuffer();
      },
    });

    // ---- what surrounds the stages in a request (until 2026-12-02 all of it was in the remainder) --------
    // One request at a time, as the pipeline's loops send them (a Request with Content-Length, the reply read
    // whole, the event loop let turn every 8 requests): (1) the stages called by hand (newContext, guard,
    // resolve, order, the attempt loop with the provider's executor and a no-op finish); (2) the same stages
    // through the pipeline's gateway (`createGateway`: handle/handleInner, the redaction check, the candidates,
    // the error-answer check); (3) the app's own gateway (src/app.ts: `started`/`finish`, the after-reply
    // queue and what it runs, the token-saver, reasoning-effort and key-limit hooks, the store's flushes).
    // (2) − (1) is the gateway's wrapper, (3) − (2) minus the bookkeeping rows below the app's hooks, and
    // the 32-loop pipeline run minus (3) what concurrency adds.
    let turns = 0;
    const oneRequest = async (send: (request: Request) => Promise<Response>) => {
      const res = await send(new Request(url, { method: "POST", headers, body: text }));
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`a request on ${bl.name} answered ${res.status}`);
      if (++turns % 8 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    const byHandDeps = { ...attemptDeps, executorFor: providerExecutor };
    const gatewayOnly = createGateway({ ...byHandDeps, keys: app.store, settings: () => ({ requireApiKey: false, maxBodyBytes: 32 * 1024 * 1024, maxAttempts: 8, precommitDeadlineMs: 60_000 }), routing: () => table, order: app.order });
    Object.assign(timed, {
      oneByHand: () =>
        oneRequest(async (request) => {
          const ctx = newContext(incoming(request), Date.now());
          const g = await guard(ctx, guardDeps);
          if (g instanceof Response) return g;
          const res = resolveModel(ctx.requestedModel, table);
          if ("kind" in res) throw new Error(res.message);
          return runAttempts(ctx, app.order.forRequest(ctx, res), { portability: "strip_with_warning", cacheAffinity: true }, byHandDeps);
        }),
      oneViaGateway: () => oneRequest((request) => gatewayOnly.handle(incoming(request))),
      oneViaApp: () => oneRequest((request) => app.gateway.handle(incoming(request))),
    });

    // ---- bookkeeping: what the app's `finish` does with a finished request (src/app.ts) ----------------
    // One real request through the app, to capture the usage row, the route trace and the metric inputs it made.
    const captured: { rec?: UsageRecord; trace?: RouteTrace; bytes?: number; attempts?: readonly AttemptTrace[] } = {};
    const store = app.store as unknown as Record<string, unknown>;
    const metrics = app.metrics as unknown as Record<string, unknown>;
    const restore = [shadow(store, "record", (rec: UsageRecord) => void (captured.rec = structuredClone(rec))), shadow(store, "save", (trace: RouteTrace) => void (captured.trace = structuredClone(trace))), shadow(metrics, "observe", (_e: unknown, _rec: unknown, bytes: number | undefined, attempts: readonly AttemptTrace[]) => void ((captured.bytes = bytes), (captured.attempts = structuredClone(attempts))))];
    await runPipelineLane(app, lane, bl.stream, 1, 1);
    app.settle(); // the reporting runs after the reply (src/after-reply.ts): made now, while the shadows listen
    for (const undo of restore) undo();
    const { rec, trace } = captured;
    if (!rec || !trace) throw new Error(`no usage row or trace was captured on ${bl.name}`);
    let seq = 0;
    const pending = new PendingWrites(1e9, Date.now, () => void pending.take());
    runs.accounting = await cpuPerCall(k("accounting"), () => accounting.finish(ctx0, { ...rec }, target!, Date.now()));
    runs.usageRow = await cpuPerCall(k("usageRow"), () => pending.record(rec));
    runs.routeTrace = await cpuPerCall(k("routeTrace"), () => {
      trace.outcome = rec.outcome;
      trace.status = rec.status;
      trace.totalMs = rec.totalMs;
      trace.warnings = [];
      pending.save(trace);
    });
    runs.metrics = await cpuPerCall(k("metrics"), () => app.metrics.observe(lane.endpoint, rec, captured.bytes, captured.attempts ?? []));
    // The buffer writes its 64 KiB every ~180 lines; until item 125 (docs/performance.md) each such write
    // cost ~250-320 µs here, most of it page faults of the fresh joined string (item 117).
    runs.logLine = await cpuPerCall(k("logLine"), () =>
      logBuffer.push(
        JSON.stringify({
          level: rec.outcome === "ok" ? "info" : "warn",
          time: Date.now(),
          msg: "request",
          requestId: rec.requestId,
          routeId: trace.routeId,
          endpoint: lane.endpoint,
          transport: ctx0.transport,
          model: rec.requestedModel || undefined,
          target: target!.label,
          outcome: rec.outcome,
          status: rec.status,
          attempts: rec.attempts,
          fallback: rec.fallback || undefined,
          ttfbMs: rec.ttfbMs,
          totalMs: rec.totalMs,
          usage: rec.usage,
          costUsd: rec.costUsd,
          tokenSaver: trace.tokenSaver,
          redactions: trace.redactions,
        }),
      ),
    );
    runs.events = await cpuPerCall(k("events"), () => {
      if (app.bus.wants("request_finished")) app.bus.publish(requestFinishedEvent(ctx0, rec, Date.now(), target!.label));
    });
    // Store flushes: rows queued untimed (fresh ids, one below the SQLite store's early-flush mark: the
    // batch a flush under load writes), then one timed flush.
    const BATCH = SQLITE_EARLY_FLUSH_AT - 1;
    const flushRuns: Run[] = [];
    for (let r = -1; r < ROUNDS; r++) {
      const id = `${k("flush")}#${r}`;
      let us = 0;
      let rows = 0;
      while (rows < Math.max(BATCH, ITER / 4)) {
        for (let i = 0; i < BATCH; i++) {
          const requestId = `${rec.requestId}-${seq++}`;
          app.store.record({ ...rec, requestId });
          app.store.save({ ...trace, requestId, routeId: `${trace.routeId}-${seq}` });
        }
        if (r >= 0) mark(id, "start");
        const c0 = jsCpu();
        await app.store.flush();
        us += jsCpu() - c0;
        if (r >= 0) mark(id, "end");
        rows += BATCH;
      }
      if (r >= 0) flushRuns.push({ id, us: us / rows, n: rows });
    }
    runs.flush = flushRuns;

    // ---- the whole pipeline, as scripts/bench-pipeline.ts runs it (32 loops), in the rounds of the rest ----
    const pipeline: PipelineRun[] = [];
    await runPipelineLane(app, lane, bl.stream, Math.min(PIPELINE_N, 1000), 32);
    const pipelineRound = async (r: number) => {
      const id = `${k("pipeline")}#${r}`;
      mark(id, "start");
      const t0 = threadCpu();
      await runPipelineLane(app, lane, bl.stream, PIPELINE_N, 32);
      const d = threadDelta(t0, threadCpu());
      mark(id, "end");
      pipeline.push({ id, n: PIPELINE_N, threads: { js: d.js / PIPELINE_N, gc: d.gc / PIPELINE_N, warmup: d.warmup / PIPELINE_N, jit: d.jit / PIPELINE_N, other: d.other / PIPELINE_N } });
    };
    Object.assign(runs, await cpuPerCallInterleaved(timed, pipelineRound));
    // The rows that are one difference of two of these (attempt loop; gateway wrapper and the app's hooks
    // from the one-at-a-time runs), measured again in short paired rounds (item 173).
    for (const [name, r] of Object.entries(await pairedRounds({ viaAttempts: timed.viaAttempts!, viaStages: timed.viaStages! }))) runs[`paired:${name}`] = r;
    // The guard and translate rows, differences of two measurements too, in paired rounds (item 207: as
    // differences of 3-round medians translate read 11.7-11.9 µs on the native Chat lanes, where the
    // client's bytes are forwarded and paired rounds read 0-1; the guard -2.4 on messages->chat JSON).
    for (const [name, r] of Object.entries(await pairedRounds({ bodyRead, guardAll: timed.guardAll! }))) runs[`paired:${name}`] = r;
    for (const [name, r] of Object.entries(await pairedRounds({ ctxOnly: timed.ctxOnly!, withTranslate: timed.withTranslate! }))) runs[`paired:${name}`] = r;
    // The rows that subtract the in-process upstream alone or the driver (executor, provider executor,
    // reply driver, commit point), in paired rounds too (item 201: as differences of 3-round medians the
    // executor row read 12.0 µs on chat stream and the commit row 17.8 on messages→chat stream, where
    // paired rounds read 4.4 and 5–8.5).
    for (const [name, r] of Object.entries(
      await pairedRounds({ sendOnly: timed.sendOnly!, viaExecute: timed.viaExecute!, viaProvider: timed.viaProvider!, viaDriver: timed.viaDriver!, viaCommit: timed.viaCommit! }),
    ))
      runs[`paired:${name}`] = r;
    for (const [name, r] of Object.entries(await pairedRounds({ oneByHand: timed.oneByHand!, oneViaGateway: timed.oneViaGateway!, oneViaApp: timed.oneViaApp! }))) runs[`paired:${name}`] = r;
    out.lanes.push({ name: bl.name, kind: bl.kind, runs, pipeline });
  }
  rawServer.stop(true);
  rmSync(floorDir, { recursive: true, force: true });
  logBuffer.flush();
  closeSync(devNull);
  const logged = bench.logged();
  await bench.shutdown();
  if (logged === 0) throw new Error("no request was logged");
  process.stdout.write(JSON.stringify(out) + "\n");
}

if (import.meta.main) await main();
