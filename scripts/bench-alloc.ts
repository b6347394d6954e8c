#!/usr/bin/env bun
/**
 * What one request allocates (issue 17: the allocation that feeds the GC, JavaScriptCore's heap-block
 * warm-up thread and mimalloc's scavenger). Runs scripts/bench-pipeline.ts's in-process pipeline (the
 * real app, its upstream answered in process, 32 concurrent loops) with the garbage collector switched
 * off (`BUN_JSC_useGC=0`: it re-runs itself as a child with that option), so that nothing allocated is
 * freed while it is counted:
 * - bytes: the growth of the process's allocator (`memoryUsage().current` of `bun:jsc`: JS heap blocks,
 *   strings, array buffers and native objects alike) over N requests, per request. It moves in whole
 *   allocator pages, so use N ≥ 1,000;
 * - objects by JavaScriptCore type (`heapStats().objectTypeCounts`): the growth per request.
 * Both include the harness's own `Request` per request and its read of the reply (a few objects and
 * the request body). The figures do not depend on machine load, so an allocation change can be
 * compared on a busy machine (unlike CPU).
 *
 * `--tool`: every upstream reply is the bench upstream's JSON reply of a text and one tool call
 * (`benchToolReply`), for the native JSON lanes (chat, messages, gemini, responses; not with --stream).
 *
 * `--live`: what a request keeps alive instead, with the collector on: in flight (its upstream reply
 * held), finished before the store's flush, and after it (scripts/lib/measure-live.ts); `--rounds N`.
 *
 * Usage: bun scripts/bench-alloc.ts [--lane chat|messages|messages-chat|responses-chat|gemini|gemini-chat|responses|codex-chat]
 *          [--stream | --tool] [--requests 2000] [--top 25] [--live [--rounds 2] [--concurrency 32]]
 */
import { heapStats, memoryUsage } from "bun:jsc";
import { EXTRA_LANES, LANES, runPipelineLane, startPipelineBenchApp, toolFetch } from "./bench-pipeline.ts";
import { measureLive } from "./lib/measure-live.ts";

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);

const live = argv.includes("--live");
if (!live && process.env.BUN_JSC_useGC !== "0") {
  // JavaScriptCore reads its options at start: run again with the collector off.
  const proc = Bun.spawn([process.execPath, import.meta.path, ...argv], { env: { ...process.env, BUN_JSC_useGC: "0" }, stdout: "inherit", stderr: "inherit" });
  process.exit(await proc.exited);
}

const laneName = opt("--lane") ?? "chat";
const lane = LANES[laneName] ?? EXTRA_LANES[laneName];
if (!lane) throw new Error(`unknown lane ${laneName}: one of ${[...Object.keys(LANES), ...Object.keys(EXTRA_LANES)].join(", ")}`);
const stream = argv.includes("--stream");
const tool = argv.includes("--tool");
if (tool && stream) throw new Error("--tool replies are JSON: not with --stream");
const n = Number(opt("--requests") ?? 2000);
const top = Number(opt("--top") ?? 25);

if (live) {
  await measureLive(laneName, lane, stream, Number(opt("--concurrency") ?? 32), Number(opt("--rounds") ?? 2), top);
  process.exit(0);
}

const bench = await startPipelineBenchApp(undefined, tool ? toolFetch : undefined);
try {
  // Warm-up: lazy modules, caches, the JIT's first tiers (what a running server has already done).
  await runPipelineLane(bench.app, lane, stream, 2000, 32);
  const before = heapStats().objectTypeCounts as Record<string, number>;
  const bytes0 = memoryUsage().current;
  await runPipelineLane(bench.app, lane, stream, n, 32);
  const bytes1 = memoryUsage().current;
  const after = heapStats().objectTypeCounts as Record<string, number>;
  const perType = Object.entries(after)
    .map(([type, count]) => [type, (count - (before[type] ?? 0)) / n] as const)
    .filter(([, d]) => d >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  const objects = perType.reduce((s, [, d]) => s + d, 0);
  console.log(`${laneName} ${stream ? "stream" : tool ? "json (tool call)" : "json"}, ${n} requests after 2,000 (GC off): ${((bytes1 - bytes0) / n / 1024).toFixed(1)} KiB and ${objects.toFixed(0)} JS objects allocated per request`);
  console.log(`| objects per request | type |\n|---|---|`);
  for (const [type, d] of perType.slice(0, top)) console.log(`| ${d.toFixed(1)} | ${type} |`);
} finally {
  await bench.shutdown();
}
