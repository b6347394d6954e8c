/**
 * The X-Switchyard-Warning header stays within what HTTP clients take, whatever the warnings quote of
 * the client's request (pipeline/warning-header.ts).
 */
import { describe, expect, test } from "bun:test";
import { WARNING_HEADER_MAX, WARNING_TEXT_MAX, WARNINGS_OMITTED, warningHeader } from "../../pipeline/warning-header.ts";

const parse = (v: string | undefined) => JSON.parse(v ?? "null") as { code: string; message: string }[];

describe("warningHeader", () => {
  test("small warnings go whole, non-ASCII as JSON escapes that parse back", () => {
    const ws = [{ code: "dropped_field", message: "temperature 0–1 … “ok” 😀" }];
    const v = warningHeader(ws)!;
    expect(v).toMatch(/^[\x20-\x7e]+$/);
    expect(parse(v)).toEqual(ws);
    expect(warningHeader([])).toBeUndefined();
  });

  test("a warning quoting 40 KB of the request is cut to its first characters and an ellipsis", () => {
    const message = `Field "${"y".repeat(40_000)}" has no Anthropic equivalent and was dropped`;
    const v = warningHeader([{ code: "dropped_field", message }, { code: "other", message: "kept" }])!;
    expect(v.length).toBeLessThanOrEqual(WARNING_HEADER_MAX);
    const back = parse(v);
    expect(back).toHaveLength(2);
    expect(back[0]!.message).toBe(`${message.slice(0, WARNING_TEXT_MAX)}…`);
    expect(back[1]).toEqual({ code: "other", message: "kept" });
  });

  test("a cut never splits a surrogate pair", () => {
    const message = `${"a".repeat(WARNING_TEXT_MAX - 1)}😀${"b".repeat(20_000)}`;
    const back = parse(warningHeader([{ code: "c", message }]));
    expect(back[0]!.message).toBe(`${"a".repeat(WARNING_TEXT_MAX - 1)}…`);
  });

  test("warnings beyond the header's size are counted in one warnings_omitted note, the first ones kept", () => {
    const ws = Array.from({ length: 100 }, (_, i) => ({ code: "dropped_field", message: `${i}: ${"z".repeat(400)}` }));
    const v = warningHeader(ws)!;
    expect(v.length).toBeLessThanOrEqual(WARNING_HEADER_MAX);
    const back = parse(v);
    const note = back.at(-1)!;
    expect(note.code).toBe(WARNINGS_OMITTED);
    const kept = back.length - 1;
    expect(kept).toBeGreaterThan(10);
    expect(back.slice(0, kept)).toEqual(ws.slice(0, kept));
    expect(note.message).toBe(`${100 - kept} more warning(s) did not fit in this header; the route trace (X-Switchyard-Route-Id) has them all.`);
  });
});
