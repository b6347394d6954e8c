#!/usr/bin/env bun
/**
 * An interleaved A/B of two source trees' SQLite store flush, in one process (issue 17): each tree's
 * `openSqliteStore` on a database file of its own (16 KiB pages, WAL, as a new install creates it),
 * its trace ring first filled past its size (10,000 traces: the ring then rotates, as on a server that
 * has run a while). Then rounds: per tree in turn (the order alternating per round), `--reads` times 255
 * (`--batch`) usage rows and as many route traces of the bench's shape are buffered (untimed: `record`/`save`), then
 * one `flush()` is timed, as CPU of the JavaScript thread (CLOCK_THREAD_CPUTIME_ID, scripts/lib/threads.ts;
 * SQLite runs on that thread). Prints each tree's µs per usage row + trace (median of the rounds,
 * mean, range) and the median of the rounds' ratios to the first tree and the mean of their
 * differences: the A/B figure of a change to the flush, the schema or the pragmas.
 *
 * Usage: bun scripts/bench-flush-ab.ts --tree NAME=DIR --tree NAME=DIR [--rounds N] [--reads N] [--batch N] [--smoke]
 *   --tree: a switchyard source tree (the first is the reference); the same tree twice is an A/A run
 *   --rounds N: rounds (default 30); --reads N: timed flushes per tree per round (default 8)
 *   --batch N: usage rows + traces per flush (default 255; the SQLite store flushes early at 1,024 since
 *              docs/performance.md item 110, so 1023 is a flush under load)
 *   --smoke: 2 rounds of 1 flush after a small fill (proves it runs; figures mean nothing;
 *            test/scripts/bench-flush-ab.test.ts)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { RouteTrace, UsageRecord } from "../pipeline/ports.ts";
import { jsThreadCpuUs } from "./lib/threads.ts";

const argv = process.argv.slice(2);
const opt = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const smoke = argv.includes("--smoke");
const trees = argv.flatMap((a, i) => (argv[i - 1] === "--tree" ? [a] : [])).map((a) => {
  const eq = a.indexOf("=");
  if (eq <= 0) throw new Error(`--tree wants NAME=DIR, got ${a}`);
  const dir = a.slice(eq + 1);
  return { name: a.slice(0, eq), dir: isAbsolute(dir) ? dir : resolve(dir) };
});
if (trees.length !== 2) throw new Error("give two --tree NAME=DIR (the same tree twice for an A/A run)");
const ROUNDS = smoke ? 2 : Number(opt("--rounds") ?? 30);
const READS = smoke ? 1 : Number(opt("--reads") ?? 8);
/** Rows per flush (`--batch`): 255 by default, the batch of the early-flush mark before item 110. */
const BATCH = Number(opt("--batch") ?? 255);
/** Batches written before the rounds: 12,750 traces fill the default 10,000-trace ring past one rotation. */
const FILL_BATCHES = smoke ? 2 : Math.ceil(12_750 / BATCH);

interface BenchStore {
  record(rec: UsageRecord): void;
  save(trace: RouteTrace): void;
  flush(): void | Promise<void>;
  close(): void | Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), "switchyard-flush-ab-"));
let seq = 0;
/** Ids that grow with time, as the gateway's do (request and route ids start with the time in hex). */
const timeHex = () => (Date.now() * 1000 + (seq++ % 1000)).toString(16);
/** The bench's usage row (chat → chat JSON, one attempt). */
const usageRow = (requestId: string): UsageRecord => ({
  requestId,
  ts: Date.now(),
  clientFormat: "openai-chat",
  requestedModel: "gpt-bench",
  providerId: "openai",
  model: "gpt-bench",
  accountId: "openai-bench",
  usage: { inputTokens: 412, outputTokens: 37 },
  estimated: false,
  outcome: "ok",
  status: 200,
  ttfbMs: 3,
  totalMs: 5,
  attempts: 1,
  fallback: false,
});
/** The bench's route trace (551 bytes of JSON). */
const routeTrace = (routeId: string, requestId: string): RouteTrace => ({
  routeId,
  requestId,
  ts: Date.now(),
  clientFormat: "openai-chat",
  requestedModel: "gpt-bench",
  candidates: ["openai/gpt-bench"],
  decisions: [{ subject: "openai/gpt-bench @ openai-bench", verdict: "in", reason: "first eligible account; the provider's only account" }],
  attempts: [{ target: "openai/gpt-bench", providerId: "openai", model: "gpt-bench", accountId: "openai-bench", startMs: 0, durationMs: 5, status: 200 }],
  warnings: [],
  outcome: "ok",
  status: 200,
  totalMs: 5,
});
const buffer = (store: BenchStore) => {
  for (let i = 0; i < BATCH; i++) {
    const t = timeHex();
    const requestId = `req_${t}${i}`;
    store.record(usageRow(requestId));
    store.save(routeTrace(`sy_${t}bench${i}`, requestId));
  }
};

const stores: BenchStore[] = [];
for (const t of trees) {
  const mod = (await import(join(t.dir, "src/store/sqlite/store.ts"))) as { openSqliteStore: (o: { path: string; flushIntervalMs: number }) => BenchStore };
  stores.push(mod.openSqliteStore({ path: join(dir, `${t.name}-${stores.length}.db`), flushIntervalMs: 3_600_000 }));
}
try {
  for (const store of stores) {
    for (let k = 0; k < FILL_BATCHES; k++) {
      buffer(store);
      await store.flush();
    }
  }
  const perRow: number[][] = trees.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [1, 0] : [0, 1];
    for (const i of order) {
      let us = 0;
      for (let k = 0; k < READS; k++) {
        buffer(stores[i]!);
        const c0 = jsThreadCpuUs();
        await stores[i]!.flush();
        us += jsThreadCpuUs() - c0;
      }
      perRow[i]!.push(us / (READS * BATCH));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`${ROUNDS} rounds × ${READS} flushes of ${BATCH} usage rows + traces per tree; CPU µs of the JS thread per usage row + trace`);
  trees.forEach((t, i) => {
    const xs = perRow[i]!;
    console.log(`${t.name.padEnd(10)} median ${median(xs).toFixed(2)}  mean ${mean(xs).toFixed(2)}  (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`);
  });
  const ratios = perRow[1]!.map((v, k) => v / perRow[0]![k]!);
  const diffs = perRow[1]!.map((v, k) => v - perRow[0]![k]!);
  console.log(`${trees[1]!.name}/${trees[0]!.name}: median ratio ${median(ratios).toFixed(3)}×, mean difference ${mean(diffs).toFixed(2)} µs per usage row + trace`);
} finally {
  for (const store of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
}
