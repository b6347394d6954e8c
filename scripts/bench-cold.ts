#!/usr/bin/env bun
/**
 * The pipeline's stages one request at a time with the CPU caches evicted before each call (issue 17,
 * docs/performance.md item 319): at concurrency 1 a request meets caches that the client, the upstream,
 * the other servers of the bench and the rest of the machine have refilled since the last one, so each
 * stage costs several times what a loop that repeats it measures. Here each timed call is preceded by a
 * turn of the event loop (so the after-reply work of the call before runs outside the timing) and by a
 * write over a buffer of `--thrash` MiB (default 64: twice the 2-core machine's 32 MiB L3; 8 evicts the
 * L2 only; 0 leaves the caches warm) and the JS thread's CPU of the call alone is taken
 * (`CLOCK_THREAD_CPUTIME_ID`, scripts/lib/threads.ts; two reads cost ~3.7 µs with the caches evicted).
 *
 * Two source trees are loaded into one process (`--a DIR`, `--b DIR`: each its own module instances and
 * its own app, `scripts/bench-pipeline.ts`'s with the in-process upstream) and every call of A is paired
 * with one of B, the order alternating, so the machine's load meets both alike; printed per lane and
 * stage: A's and B's medians and the median of the paired differences B − A with its quartiles (µs).
 * With one tree (`--a` only) it prints that tree's medians.
 *
 * Stages (the bench's request bodies, streamed; `--stages` a comma-separated subset):
 * - newctx: `newContext` of a fresh `Request` (ids, the headers as an object, the trace);
 * - bodyread: the `Request`'s `bytes()`, decoded and `JSON.parse`d (what the guard's body read does natively);
 * - guard: `newContext` + `guard` (browser rules not included: they are the HTTP layer's);
 * - translate: `translate` for the lane's target on a context made untimed;
 * - driver: `replyDriverFor` fed the upstream reply's chunks as the commit point feeds a reply that
 *   arrived whole (`hold` then `endWhole` where the driver has them, else `push` and `end`);
 * - whole: `gateway.handle` and the reply read to its end (the in-process upstream's reply included).
 *
 * Usage: bun scripts/bench-cold.ts --a DIR [--b DIR] [--n 1500] [--thrash 64] [--warm 2000]
 *          [--stages newctx,bodyread,guard,translate,driver,whole] [--lanes responses-chat,messages-chat,chat]
 *          [--smoke]   (a few calls per stage: proves it runs; figures mean nothing)
 */
import { join } from "node:path";

const argv = process.argv.slice(2);
const opt = (n: string, d: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1]! : d);
const SMOKE = argv.includes("--smoke");
const N = SMOKE ? 4 : Number(opt("--n", "1500"));
const WARM = SMOKE ? 4 : Number(opt("--warm", "2000"));
const THRASH_MB = SMOKE ? 1 : Number(opt("--thrash", "64"));
const STAGES = opt("--stages", "newctx,bodyread,guard,translate,driver,whole").split(",");
const LANE_NAMES = opt("--lanes", "responses-chat,messages-chat,chat").split(",");
const ROOT = join(import.meta.dir, "..");
const TREES = [opt("--a", ROOT), ...(argv.includes("--b") ? [opt("--b", ROOT)] : [])];

/** One timed call of a stage: the JS thread's CPU µs of the call alone. */
type Stage = () => Promise<number>;

const evict = new Float64Array((THRASH_MB * 1024 * 1024) / 8);
/** Writes one word of every 64-byte line of the buffer: what it displaces from the caches is gone. */
function thrash(): void {
  for (let i = 0; i < evict.length; i += 8) evict[i]! += 1;
}

async function drain(body: ReadableStream<Uint8Array>, each?: (c: Uint8Array) => void): Promise<void> {
  const reader = body.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) return;
    each?.(r.value);
  }
}

/** The stages of every lane for the source tree `tree`, on an app of its own; `shutdown` ends the app. */
async function setup(tree: string) {
  const { guard } = await import(join(tree, "pipeline/guard.ts"));
  const { newContext } = await import(join(tree, "pipeline/context.ts"));
  const { resolveModel } = await import(join(tree, "pipeline/resolve.ts"));
  const { translate } = await import(join(tree, "pipeline/translate.ts"));
  const { replyDriverFor } = await import(join(tree, "pipeline/commit.ts"));
  const { guardedContext } = await import(join(tree, "scripts/lib/context.ts"));
  const { fakeFetch, LANES, startPipelineBenchApp } = await import(join(tree, "scripts/bench-pipeline.ts"));
  const { jsThreadCpuUs } = await import(join(tree, "scripts/lib/threads.ts"));
  const { app, shutdown } = await startPipelineBenchApp();
  const cfg = app.config();
  const table = { providers: cfg.providers, aliases: cfg.aliases, combos: cfg.combos, accounts: app.registry };
  const guardDeps = { keys: app.store, settings: () => ({ requireApiKey: false, maxBodyBytes: 32 * 1024 * 1024 }) };
  const lanes: Record<string, Record<string, Stage>> = {};
  for (const name of LANE_NAMES) {
    const lane = LANES[name];
    if (!lane || lane.gemini) throw new Error(`unknown lane ${name}: one of ${Object.keys(LANES).filter((k) => !LANES[k].gemini).join(", ")}`);
    const body = lane.body(true);
    const text = JSON.stringify(body);
    const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01", host: "127.0.0.1", "content-length": String(Buffer.byteLength(text)) };
    const request = () => new Request("http://127.0.0.1" + lane.path, { method: "POST", headers, body: text });
    const incoming = (r: Request) => ({ request: r, endpoint: lane.endpoint, peer: "127.0.0.1" });
    const g0 = await guard(newContext(incoming(request()), Date.now()), guardDeps);
    if (g0 instanceof Response) throw new Error(`the guard refused the ${name} request: ${g0.status}`);
    const target = app.order.forRequest(g0, resolveModel(g0.requestedModel, table))[0];
    const fresh = () => guardedContext(lane.endpoint, body, { path: lane.path }, undefined, Date.now());
    const t0 = translate(fresh(), target, "strip_with_warning");
    if ("kind" in t0) throw new Error(t0.message);
    const path = { "anthropic-messages": "/v1/messages", "openai-responses": "/v1/responses", "openai-chat": "/v1/chat/completions" }[t0.upstreamFormat as string];
    const upstream = await fakeFetch("http://bench.invalid" + path, { method: "POST", body: typeof t0.body === "string" ? t0.body : new TextDecoder().decode(t0.body) });
    const chunks: Uint8Array[] = [];
    await drain(upstream.body!, (c) => chunks.push(c));
    const wholeHeaders = { "content-type": "application/json", "anthropic-version": "2023-06-01", "content-length": headers["content-length"] };
    lanes[name] = {
      newctx: async () => {
        const r = request();
        const t = jsThreadCpuUs();
        newContext(incoming(r), Date.now());
        return jsThreadCpuUs() - t;
      },
      bodyread: async () => {
        const r = request();
        const t = jsThreadCpuUs();
        JSON.parse(new TextDecoder().decode(await r.bytes()));
        return jsThreadCpuUs() - t;
      },
      guard: async () => {
        const r = request();
        const t = jsThreadCpuUs();
        await guard(newContext(incoming(r), Date.now()), guardDeps);
        return jsThreadCpuUs() - t;
      },
      translate: async () => {
        const c = fresh();
        const t = jsThreadCpuUs();
        translate(c, target, "strip_with_warning");
        return jsThreadCpuUs() - t;
      },
      driver: async () => {
        const c = fresh();
        const tr = translate(c, target, "strip_with_warning");
        const reply = { status: 200, headers: upstream.headers, body: new ReadableStream() };
        const t = jsThreadCpuUs();
        const d = replyDriverFor(c, target.provider, tr, reply);
        for (const chunk of chunks) {
          if (d.hold) d.hold(chunk);
          else d.push(chunk);
        }
        if (d.endWhole) d.endWhole();
        else d.end();
        return jsThreadCpuUs() - t;
      },
      whole: async () => {
        const r = new Request(app.url + lane.path, { method: "POST", headers: wholeHeaders, body: text });
        const t = jsThreadCpuUs();
        const res = await app.gateway.handle(incoming(r));
        await res.arrayBuffer();
        const us = jsThreadCpuUs() - t;
        if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}`);
        return us;
      },
    };
    for (const s of STAGES) if (!lanes[name][s]) throw new Error(`unknown stage ${s}: one of ${Object.keys(lanes[name]).join(", ")}`);
  }
  return { lanes, shutdown };
}

const quantile = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const apps = [];
for (const tree of TREES) apps.push(await setup(tree));
console.log(`${TREES.length === 2 ? `A ${TREES[0]}, B ${TREES[1]}` : `A ${TREES[0]}`}; ${N} calls per stage after ${WARM} warm ones, ${THRASH_MB} MiB written before each; JS-thread CPU µs, medians`);
for (const lane of LANE_NAMES) {
  for (const stage of STAGES) {
    const fns = apps.map((a) => a.lanes[lane]![stage]!);
    for (let i = 0; i < WARM; i++) for (const f of fns) await f();
    const us: number[][] = fns.map(() => []);
    for (let i = 0; i < N; i++) {
      const order = i % 2 === 0 ? fns.map((_, k) => k) : fns.map((_, k) => fns.length - 1 - k);
      for (const k of order) {
        await turn();
        thrash();
        us[k]!.push(await fns[k]!());
      }
    }
    let line = `${lane.padEnd(15)} ${stage.padEnd(9)} A ${quantile(us[0]!, 0.5).toFixed(1).padStart(6)}`;
    if (fns.length === 2) {
      const d = us[0]!.map((a, i) => us[1]![i]! - a);
      line += `  B ${quantile(us[1]!, 0.5).toFixed(1).padStart(6)}  B−A ${quantile(d, 0.5).toFixed(1).padStart(6)} [${quantile(d, 0.25).toFixed(1)}, ${quantile(d, 0.75).toFixed(1)}]`;
    }
    console.log(line);
  }
}
for (const a of apps) await a.shutdown();
