/**
 * bench-alloc.ts `--live`: what a request keeps alive (issue 17: what survives an eden collection is
 * promoted and dies in the old generation). Runs scripts/bench-pipeline.ts's in-process app with the
 * garbage collector on and its upstream replies held:
 * - (a) in flight: `concurrency` requests started whose upstream reply has sent its headers and its
 *   first half (cut at an event boundary for a stream) and not ended; then `Bun.gc(true)` and
 *   `heapStats()` against the same taken before they started, per request;
 * - (b) finished, before the store's flush: the replies released and read to their end, their
 *   bookkeeping run (one `setImmediate`, src/after-reply.ts), then at once (before the 100 ms flush
 *   timer) `Bun.gc(true)` and the same;
 * - (c) after the flush: 1.1 s later (the SQLite store writes every 1 s or at 1,024 rows), the same (what is still held once the store has written).
 * Bytes are `heapStats().heapSize` (live JS heap after a full collection) and `extraMemorySize` (array
 * buffers and other native memory the heap reports). The harness's own share is in the figures: per
 * request its `Request` (and body), the reply read so far, the held upstream stream and its bytes.
 * `LIVE_SNAPSHOT=file` also writes `Bun.generateHeapSnapshot()` taken in flight (a) to that file, and
 * the one taken at (b) to `file.finished`.
 */
import { heapStats } from "bun:jsc";
import { fakeFetch, runPipelineLane, startPipelineBenchApp, type LANES } from "../bench-pipeline.ts";

type Lane = (typeof LANES)[string];
type Snapshot = { types: Record<string, number>; heap: number; extra: number; objects: number };

/** Held upstream state: when `gate` is set, every reply is cut in two and its second half waits for it. */
const hold: { gate: Promise<void> | undefined; calls: number } = { gate: undefined, calls: 0 };

/** fakeFetch, whose replies are held while {@link hold}.gate is set (see the module comment). */
const heldFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const reply = await fakeFetch(input, init);
  const gate = hold.gate;
  if (!gate) return reply;
  const bytes = new Uint8Array(await reply.arrayBuffer());
  const sse = reply.headers.get("content-type")?.includes("event-stream");
  let cut = sse ? bytes.indexOf(10, bytes.length >> 1) : bytes.length >> 1;
  if (sse) cut = bytes.indexOf(10, cut + 1) + 1; // after the blank line ending an event
  if (cut <= 0) cut = bytes.length >> 1;
  hold.calls++;
  return new Response(heldBody(bytes, cut, gate), { status: reply.status, headers: reply.headers });
}) as typeof fetch;

/** `bytes` up to `cut` at once, the rest once `gate` settles (a function of its own: its closure holds no fetch argument). */
function heldBody(bytes: Uint8Array, cut: number, gate: Promise<void>): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (sent++ === 0) return c.enqueue(bytes.slice(0, cut));
      await gate;
      c.enqueue(bytes.slice(cut));
      c.close();
    },
  });
}

const snap = (): Snapshot => {
  Bun.gc(true);
  const s = heapStats();
  return { types: { ...(s.objectTypeCounts as Record<string, number>) }, heap: s.heapSize, extra: s.extraMemorySize, objects: s.objectCount };
};

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

function print(label: string, a: Snapshot, b: Snapshot, n: number, top: number) {
  const perType = Object.entries(b.types)
    .map(([type, count]) => [type, (count - (a.types[type] ?? 0)) / n] as const)
    .filter(([, d]) => Math.abs(d) >= 0.05)
    .sort((x, y) => y[1] - x[1]);
  console.log(
    `${label}: ${((b.heap - a.heap) / n / 1024).toFixed(2)} KiB heap + ${((b.extra - a.extra) / n / 1024).toFixed(2)} KiB extra, ${((b.objects - a.objects) / n).toFixed(1)} objects per request`,
  );
  console.log(perType.slice(0, top).map(([type, d]) => `${d.toFixed(2)} ${type}`).join(", "));
}

/** One (a)/(b)/(c) measurement of `lane` (see the module comment), printed; `rounds` times. */
export async function measureLive(laneName: string, lane: Lane, stream: boolean, concurrency: number, rounds: number, top: number) {
  const bench = await startPipelineBenchApp(undefined, heldFetch);
  try {
    await runPipelineLane(bench.app, lane, stream, 2000, 32); // warm-up
    const text = JSON.stringify(lane.body(stream));
    const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01", "content-length": String(Buffer.byteLength(text)) };
    const url = bench.app.url + lane.path + (lane.gemini ? (stream ? ":streamGenerateContent?alt=sse" : ":generateContent") : "");
    const pathModel = lane.gemini ? lane.path.slice(lane.path.lastIndexOf("/") + 1) : undefined;
    console.log(`${laneName} ${stream ? "stream" : "json"}, ${concurrency} requests, live heap after Bun.gc(true) against before them, per request:`);
    for (let r = 0; r < rounds; r++) {
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the warm-up's (or last round's) flush (every 1 s)
      const before = snap();
      let release!: () => void;
      hold.gate = new Promise<void>((resolve) => (release = resolve));
      hold.calls = 0;
      let status = 0;
      const done = Array.from({ length: concurrency }, async () => {
        const request = new Request(url, { method: "POST", headers, body: text });
        const res = await bench.app.gateway.handle(pathModel ? { request, endpoint: lane.endpoint, peer: "127.0.0.1", pathModel, pathStream: stream } : { request, endpoint: lane.endpoint, peer: "127.0.0.1" });
        await res.arrayBuffer();
        status = Math.max(status, res.status);
      });
      while (hold.calls < concurrency) await tick();
      await tick();
      const inFlight = snap();
      if (process.env.LIVE_SNAPSHOT) await Bun.write(process.env.LIVE_SNAPSHOT, JSON.stringify(Bun.generateHeapSnapshot()));
      hold.gate = undefined;
      release();
      await Promise.all(done);
      await new Promise<void>((resolve) => setImmediate(resolve)); // the bookkeeping after the replies (src/after-reply.ts)
      const t0 = performance.now();
      const finished = snap();
      if (process.env.LIVE_SNAPSHOT) await Bun.write(`${process.env.LIVE_SNAPSHOT}.finished`, JSON.stringify(Bun.generateHeapSnapshot()));
      const gcMs = performance.now() - t0;
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the store flushes every 1 s (or at 1,024 rows)
      const flushed = snap();
      if (status !== 200) throw new Error(`a request answered ${status}`);
      print(`(a) in flight`, before, inFlight, concurrency, top);
      print(`(b) finished, before the flush (the collection took ${gcMs.toFixed(0)} ms)`, before, finished, concurrency, top);
      print(`(c) after the flush`, before, flushed, concurrency, top);
    }
  } finally {
    await bench.shutdown();
  }
}
