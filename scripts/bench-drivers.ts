/**
 * scripts/bench section 4: the in-process reply drivers (no network), on the bytes the bench upstream
 * serves. Called by scripts/bench.ts; see docs/performance.md.
 */
/** One driver on one lane: events/s and MB/s per round. */
export interface CodecRow {
  lane: string;
  driver: string;
  eventsPerSec: number[];
  mbPerSec: number[];
}

/** What the driver bench needs from the main bench: the running bench upstream and the round counts. */
export interface DriverBenchOptions {
  /** Base URL of the bench upstream (scripts/bench-upstream.ts). */
  upstream: string;
  headers: Record<string, string>;
  rounds: number;
  /** Timed runs per round and case (after 3 warm-ups). */
  reps: number;
  /** Events in one big stream (the upstream's `-big` models). */
  events: number;
}

/**
 * The reply drivers alone, in process (SPEC F-2: native tap vs translation): each case replays the
 * bench upstream's 20,000-event stream through a fresh driver in 16 KiB chunks.
 */
export async function driverBench(o: DriverBenchOptions): Promise<CodecRow[]> {
  const { codecFor } = await import("../formats/index.ts");
  const { passthroughDriver, TranslatedStreamDriver } = await import("../pipeline/re-translate.ts");
  // the same bytes the proxies see, from the running bench upstream
  const fetchBig = async (path: string, body: string) => new Uint8Array(await (await fetch(o.upstream + path, { method: "POST", headers: o.headers, body })).arrayBuffer());
  const chatBig = await fetchBig("/v1/chat/completions", JSON.stringify({ model: "gpt-bench-big", stream: true, stream_options: { include_usage: true } }));
  const msgBig = await fetchBig("/v1/messages", JSON.stringify({ model: "claude-bench-big", stream: true }));
  const chunks = (b: Uint8Array, size = 16 * 1024) => {
    const out: Uint8Array[] = [];
    for (let o = 0; o < b.length; o += size) out.push(b.subarray(o, Math.min(b.length, o + size)));
    return out;
  };
  const cases: Array<{ lane: string; driver: string; bytes: Uint8Array; make: () => { push(c: Uint8Array): Uint8Array; end(): Uint8Array } }> = [
    { lane: "chat→chat", driver: "native tap", bytes: chatBig, make: () => passthroughDriver(codecFor("openai-chat").createTap({ family: "openai", includeUsage: false })) },
    { lane: "messages→messages", driver: "native tap", bytes: msgBig, make: () => passthroughDriver(codecFor("anthropic-messages").createTap({ family: "anthropic" })) },
    {
      lane: "messages→chat",
      driver: "translated",
      bytes: chatBig,
      make: () => new TranslatedStreamDriver(codecFor("openai-chat"), codecFor("anthropic-messages"), { family: "openai" }, { model: "gpt-bench" }),
    },
    {
      lane: "responses→chat",
      driver: "translated",
      bytes: chatBig,
      make: () => new TranslatedStreamDriver(codecFor("openai-chat"), codecFor("openai-responses"), { family: "openai" }, { model: "gpt-bench" }),
    },
    {
      lane: "chat→messages",
      driver: "translated",
      bytes: msgBig,
      make: () => new TranslatedStreamDriver(codecFor("anthropic-messages"), codecFor("openai-chat"), { family: "anthropic" }, { model: "claude-bench" }),
    },
  ];
  const rows: CodecRow[] = cases.map((c) => ({ lane: c.lane, driver: c.driver, eventsPerSec: [], mbPerSec: [] }));
  for (let r = 0; r < o.rounds; r++) {
    for (let ci = 0; ci < cases.length; ci++) {
      const c = cases[ci];
      const parts = chunks(c.bytes);
      for (let w = 0; w < 3; w++) {
        const d = c.make();
        for (const p of parts) d.push(p);
        d.end();
      }
      const reps = o.reps;
      const t0 = performance.now();
      for (let k = 0; k < reps; k++) {
        const d = c.make();
        for (const p of parts) d.push(p);
        d.end();
      }
      const secs = (performance.now() - t0) / 1000;
      rows[ci].eventsPerSec.push((o.events * reps) / secs);
      rows[ci].mbPerSec.push((c.bytes.length * reps) / 1e6 / secs);
    }
  }
  return rows;
}
