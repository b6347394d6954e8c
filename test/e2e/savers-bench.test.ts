/**
 * scripts/bench-savers in its quick mode, as invariants (SPEC S-1, S-4): real tool outputs generated
 * on this machine (git show / git diff / git status of this repository and a dirty scratch clone,
 * grep over node_modules, ls -la, tree-like listings, real connection-retry logs, one naming
 * `127.0.0.1:PORT:`, and gcc under make when installed) are never made longer and keep what the kind's
 * check expects (file names, hunk headers, changed lines, status entries, listing names or their
 * elision count, error and FATAL lines, the last line, make's failure line, every line kept or
 * counted); and a multi-turn conversation through the gateway keeps every prefix-cache hit with the
 * savers on while sending fewer bytes. The figures themselves are the report's (README), not asserted
 * here; nothing is timed.
 */
import { describe, expect, test } from "bun:test";
import { buildCorpus, measure, simulateConversation, summarise, type Measured } from "../../scripts/savers-corpus.ts";

let measured: Measured[] = [];

describe("bench-savers --quick", () => {
  test("every output: never longer, everything expected kept; every kind is represented and shortened", async () => {
    const corpus = await buildCorpus({ quick: true });
    measured = corpus.map(measure);
    for (const m of measured) {
      expect({ source: m.item.source, longer: m.after > m.before }).toEqual({ source: m.item.source, longer: false });
      expect({ source: m.item.source, missing: m.missing }).toEqual({ source: m.item.source, missing: [] });
    }
    const kinds = summarise(measured);
    // gcc output only where a C compiler and make are installed (this machine: gcc 12).
    const expected = ["git diff", "git status", "search", "ls -la", "tree", "log", ...(Bun.which("cc") && Bun.which("make") ? ["compiler"] : [])];
    for (const kind of expected) {
      const k = kinds.find((x) => x.kind === kind);
      expect({ kind, shortened: (k?.shortened ?? 0) > 0 }).toEqual({ kind, shortened: true });
    }
    // The log of 120 identical-shape retries keeps its errors and loses almost everything else.
    const log = measured.find((m) => m.item.kind === "log")!;
    expect(log.after).toBeLessThan(log.before / 5);
  }, 60_000);

  test("a 6-turn conversation: every prefix-cache hit kept with the savers, fewer bytes sent and fewer after the common prefix", async () => {
    const outputs = measured.filter((m) => m.rule).map((m) => m.item.text);
    expect(outputs.length).toBeGreaterThan(3);
    const sim = await simulateConversation(outputs, 6);
    expect(sim.off).toMatchObject({ cacheHits: 5, transitions: 5 });
    expect(sim.savers).toMatchObject({ cacheHits: 5, transitions: 5 });
    expect(sim.savers.bytesSent).toBeLessThan(sim.off.bytesSent);
    expect(sim.savers.uncachedBytes).toBeLessThan(sim.off.uncachedBytes);
  }, 60_000);
});
