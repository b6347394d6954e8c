/**
 * The budget's CPU by thread kind (scripts/lib/threads.ts): thread names map to the rows the budget
 * prints, and CPU of a thread that ended between two readings (JavaScriptCore's compiler threads end
 * when idle) is still counted, to the kind of the thread that ended.
 */
import { expect, test } from "bun:test";
import { kindOf, threadCpu, threadDelta, type ThreadKind, type ThreadReading } from "../../scripts/lib/threads.ts";

test("thread names map to the budget's kinds: JSCWarmUp is heap-block warm-up, not a compiler", () => {
  expect(["HeapHelper", "JSCWarmUp", "JITWorker", "mi-scavenger", "HTTP Client", "Bun Pool 3"].map(kindOf)).toEqual(["gc", "warmup", "jit", "other", "other", "other"]);
});

const reading = (js: number, mainTicksUs: number, processUs: number, threads: Array<[string, ThreadKind, number]>): ThreadReading => ({
  js,
  mainTicksUs,
  processUs,
  threads: new Map(threads.map(([tid, kind, us]) => [tid, { kind, us }])),
});

test("a compiler thread that ended between the readings keeps its CPU in the JIT row", () => {
  // JIT thread 11 ran 100 µs before the first reading and 70 more before it ended; GC thread 12 ran
  // 30 µs in between; thread 13 started and ran 10 µs. The process total has them all.
  const a = reading(5_000, 5_000, 5_150, [["11", "jit", 100], ["12", "gc", 50]]);
  const b = reading(6_000, 6_000, 6_000 + 170 + 80 + 10, [["12", "gc", 80], ["13", "other", 10]]);
  expect(threadDelta(a, b)).toEqual({ js: 1_000, gc: 30, warmup: 0, jit: 70, other: 10 });
});

test("without an ended thread the kinds are the live threads' deltas", () => {
  const a = reading(0, 0, 60, [["11", "jit", 10], ["12", "warmup", 50]]);
  const b = reading(400, 400, 400 + 30 + 90, [["11", "jit", 30], ["12", "warmup", 90]]);
  expect(threadDelta(a, b)).toEqual({ js: 400, gc: 0, warmup: 40, jit: 20, other: 0 });
});

test("a real reading of this process lists its threads and a process total", () => {
  const r = threadCpu();
  expect(r.js).toBeGreaterThan(0);
  if (process.platform === "linux") {
    expect(r.processUs).toBeGreaterThanOrEqual(r.mainTicksUs);
    expect(r.threads.size).toBeGreaterThan(0);
  }
});
