/**
 * A trace block's text (src/store/sqlite/trace-ring.ts) is what route-trace reads find ids in and parse:
 * one line per trace, `\n"ROUTE"\t"REQUEST"\t` then the trace's JSON, as UTF-8 under zstd. The encoder
 * writes it into a buffer kept between flushes (docs/performance.md item 182); these blocks must read
 * back as the same text the string form gave, whatever the ids and bodies hold and however large the
 * block, one block after another in the same buffer.
 */
import { expect, test } from "bun:test";
import { decodeBlock, encodeBlock, findLine, linesNewestFirst } from "../../src/store/sqlite/trace-ring.ts";
import type { TraceParams } from "../../src/store/rows.ts";

/** The block's text as it is defined: the lines joined as one string. */
const textOf = (traces: TraceParams[]) => traces.map(([route, request, , body]) => "\n" + JSON.stringify(route) + "\t" + JSON.stringify(request) + "\t" + body).join("");

const trace = (route: string, request: string, extra: Record<string, unknown> = {}): TraceParams => [route, request, 1, JSON.stringify({ routeId: route, requestId: request, ...extra })];

test("a block reads back as its lines' text: plain and escaped ids, non-ASCII and escaped bodies", () => {
  const traces: TraceParams[] = [
    trace("sy_01a24096a193C_F-jbZPT7xqXB0qlOcjP5yQ", "req_01a24096a19397e7a49c82f4", { attempts: [{ error: "upstream said: \"no\"\n" }] }),
    trace('sy_with"quote\\and\ttab', "req_\u0001control", { warnings: ["naïve café"] }),
    trace("sy_ünïcödé", "req_€uro", { error: { message: "日本語のエラー 🙂" } }),
    trace("sy_lone\ud800surrogate", "req_\udc00", { model: "x\u2028y" }),
  ];
  const b = encodeBlock(traces);
  expect(decodeBlock(b.body)).toBe(textOf(traces));
  expect(b).toMatchObject({ n: 4, minRoute: 'sy_01a24096a193C_F-jbZPT7xqXB0qlOcjP5yQ', maxRoute: "sy_ünïcödé" });
  const text = decodeBlock(b.body);
  expect(findLine(text, 'sy_with"quote\\and\ttab', true)?.requestId).toBe("req_\u0001control");
  expect(JSON.parse(findLine(text, "req_€uro", false)!.json).error.message).toBe("日本語のエラー 🙂");
  expect(linesNewestFirst(text).map((l) => l.routeId)).toEqual(traces.map((t) => t[0]).reverse());
});

test("blocks larger than the kept buffer, and the blocks after them, read back whole", () => {
  const big = (n: number, size: number, tag: string) => Array.from({ length: n }, (_, i) => trace(`sy_${tag}${i}`, `req_${tag}${i}`, { error: "é".repeat(size) }));
  for (const traces of [big(256, 700, "a"), big(256, 2_000, "b"), big(3, 10, "c"), big(256, 6_000, "d"), big(1, 1, "e"), big(256, 600, "f")]) {
    expect(decodeBlock(encodeBlock(traces).body)).toBe(textOf(traces));
  }
});
