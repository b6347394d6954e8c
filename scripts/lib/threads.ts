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

/**
 * One reading of the process's CPU by thread: the JS thread's own clock ({@link jsThreadCpuUs}), every
 * other live thread's utime + stime from `/proc/self/task/<tid>/stat` (µs, in 10 ms ticks), and the
 * process's total from `/proc/self/stat`, which keeps the CPU of threads that have ended.
 */
export interface ThreadReading {
  /** The JS thread's CPU, µs (CLOCK_THREAD_CPUTIME_ID). */
  js: number;
  /** Every other live thread by tid: its kind and CPU since it started, µs. */
  threads: Map<string, { kind: ThreadKind; us: number }>;
  /** The JS thread's CPU as /proc counts it (ticks, µs), to set against {@link processUs}. */
  mainTicksUs: number;
  /** The whole process's CPU, ended threads included (ticks, µs); NaN where /proc is not there. */
  processUs: number;
}

const ticksUs = (stat: string) => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000; // utime + stime, 100 ticks per second
};

/** Reads the CPU of every thread of this process now (see {@link ThreadReading}). */
export function threadCpu(): ThreadReading {
  const out: ThreadReading = { js: jsThreadCpuUs(), threads: new Map(), mainTicksUs: 0, processUs: Number.NaN };
  let tids: string[];
  try {
    out.processUs = ticksUs(readFileSync("/proc/self/stat", "utf8"));
    tids = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  const self = String(process.pid);
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      if (tid === self) {
        out.mainTicksUs = ticksUs(stat);
        continue;
      }
      const comm = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      out.threads.set(tid, { kind: kindOf(comm), us: ticksUs(stat) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/**
 * Another process's CPU by thread name now: utime + stime of each live thread of `/proc/PID/task`
 * (µs, in 10 ms ticks), summed over threads of one name with its trailing number dropped (`JITWorker`,
 * `HeapHelper`); the main thread is `js`. A thread that ended is not in it (compare the process total).
 */
export function threadsByName(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  const main = String(pid);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const us = ticksUs(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"));
      const name = tid === main ? "js" : readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim().replace(/\d+$/, "");
      out.set(name, (out.get(name) ?? 0) + us);
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

/**
 * µs of CPU per thread kind between two {@link threadCpu} readings. JavaScriptCore's compiler (and
 * other automatic) threads end when idle a while, and an ended thread is no longer in /proc/self/task:
 * what the process's total grew by beyond the live threads' deltas is the CPU of threads that ended in
 * between (or started and ended), charged to the kind of the threads that ended ("other" when they
 * were of several kinds or none was seen to end). Without it a per-kind delta could come out low or
 * negative (docs/performance.md, "JIT compilation, the idle trim and allocation churn").
 */
export function threadDelta(a: ThreadReading, b: ThreadReading): Record<ThreadKind, number> {
  const out: Record<ThreadKind, number> = { js: b.js - a.js, gc: 0, warmup: 0, jit: 0, other: 0 };
  let seen = 0;
  for (const [tid, t] of b.threads) {
    const d = t.us - (a.threads.get(tid)?.us ?? 0);
    out[t.kind] += d;
    seen += d;
  }
  const ended = new Set<ThreadKind>();
  for (const [tid, t] of a.threads) if (!b.threads.has(tid)) ended.add(t.kind);
  const unseen = b.processUs - a.processUs - (b.mainTicksUs - a.mainTicksUs) - seen;
  if (unseen > 0) out[ended.size === 1 ? [...ended][0]! : "other"] += unseen;
  return out;
}
