/**
 * CPU time by thread of this process (Linux), for the budget's thread rows: the JavaScript thread's own
 * CPU ({@link jsThreadCpuUs}) and every other thread's from `/proc/self/task/<tid>/stat` (utime + stime
 * in clock ticks of 10 ms: only long runs give figures).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dlopen, FFIType, ptr } from "bun:ffi";

/**
 * The calling thread's CPU time in µs, from `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (libc through
 * bun:ffi; nanosecond resolution, ~1–2 µs per call). `process.threadCpuUsage` is the fallback where
 * libc cannot be opened: on kernels without fine CPU accounting its figures move in whole scheduler
 * ticks (4 ms here), too coarse for microbenchmarks of a few ms.
 */
export const jsThreadCpuUs: () => number = (() => {
  try {
    const libc = dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
    const CLOCK_THREAD_CPUTIME_ID = process.platform === "darwin" ? 16 : 3;
    const ts = new BigInt64Array(2);
    const p = ptr(ts);
    const read = () => {
      if (libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, p) !== 0) throw new Error("clock_gettime failed");
      return Number(ts[0]) * 1e6 + Number(ts[1]) / 1e3;
    };
    read();
    return read;
  } catch {
    return () => {
      const t = process.threadCpuUsage();
      return t.user + t.system;
    };
  }
})();

/** The kinds of threads of a Bun process the budget names (JavaScriptCore and Bun name their threads). */
export type ThreadKind = "js" | "gc" | "warmup" | "jit" | "other";

/** µs of CPU per thread kind since the process started; empty (all zero) where /proc is not there. */
export function threadCpu(): Record<ThreadKind, number> {
  const out: Record<ThreadKind, number> = { js: 0, gc: 0, warmup: 0, jit: 0, other: 0 };
  out.js = jsThreadCpuUs();
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  const self = String(process.pid);
  for (const tid of tids) {
    if (tid === self) continue;
    try {
      const comm = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const us = (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, 100 ticks per second
      out[kindOf(comm)] += us;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/**
 * The kind of a thread by its name: JavaScriptCore's `HeapHelper` (parallel and concurrent marking) is
 * GC; `JSCWarmUp` is JavaScriptCore's `WarmUpBlockProvider`, which allocates GC heap blocks (MarkedBlocks)
 * ahead of the JS thread and writes one byte per page so that the page faults land on it instead: its
 * CPU follows how many new heap blocks the program's allocation needs, not compilation; `JITWorker` runs
 * the baseline, DFG and FTL compilers; everything else (mimalloc's `mi-scavenger`, which returns freed
 * pages to the system, `Bun Pool N`, Bun's fetch thread `HTTP Client`, file-watch threads) is "other".
 */
export function kindOf(name: string): ThreadKind {
  if (/^HeapHelper/i.test(name)) return "gc";
  if (/^JSCWarmUp/i.test(name)) return "warmup";
  if (/^JITWorker/i.test(name)) return "jit";
  return "other";
}

/** The difference of two {@link threadCpu} readings, µs per kind. */
export function threadDelta(a: Record<ThreadKind, number>, b: Record<ThreadKind, number>): Record<ThreadKind, number> {
  return { js: b.js - a.js, gc: b.gc - a.gc, warmup: b.warmup - a.warmup, jit: b.jit - a.jit, other: b.other - a.other };
}
