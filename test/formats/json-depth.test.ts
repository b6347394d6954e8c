/**
 * formats/json-depth.ts: the nesting check the guard runs on a body's bytes before parsing it
 * (SPEC G-4). Both of its paths are exercised: few brackets (counted, never walked) and more brackets
 * than the limit (walked, strings skipped).
 */
import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../formats/json-depth.ts";
import { parseJsonObject } from "../../pipeline/guard.ts";
import { FIXTURES } from "../support/fixtures.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);
const arrays = (n: number) => "[".repeat(n) + "]".repeat(n);
const objects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
/** A body object (level 1) whose `metadata` nests `n` more levels. */
const bodyWith = (nested: string) => `{"model":"m","metadata":${nested}}`;

describe("nestsDeeperThan", () => {
  test("exactly the limit passes, one level more does not (arrays, objects, both mixed)", () => {
    expect(nestsDeeperThan(utf8(bodyWith(arrays(MAX_JSON_DEPTH - 1))))).toBe(false);
    expect(nestsDeeperThan(utf8(bodyWith(arrays(MAX_JSON_DEPTH))))).toBe(true);
    expect(nestsDeeperThan(utf8(bodyWith(objects(MAX_JSON_DEPTH - 1))))).toBe(false);
    expect(nestsDeeperThan(utf8(bodyWith(objects(MAX_JSON_DEPTH))))).toBe(true);
    const mixed = (n: number) => '[{"a":'.repeat(n / 2) + "1" + "}]".repeat(n / 2);
    expect(nestsDeeperThan(utf8(bodyWith(mixed(MAX_JSON_DEPTH - 2))))).toBe(false);
    expect(nestsDeeperThan(utf8(bodyWith(mixed(MAX_JSON_DEPTH))))).toBe(true);
  });

  test("many brackets side by side are not depth (the walk path, answered false)", () => {
    const wide = bodyWith(`[${Array.from({ length: 5000 }, () => "[{}]").join(",")}]`);
    expect(nestsDeeperThan(utf8(wide))).toBe(false);
  });

  test("brackets inside strings, escaped quotes included, do not count", () => {
    expect(nestsDeeperThan(utf8(`{"a":"${"[{".repeat(5000)}"}`))).toBe(false);
    expect(nestsDeeperThan(utf8(`{"a":"\\"${"[".repeat(5000)}\\\\","b":1}`))).toBe(false);
    // after the string ends, real nesting counts again
    expect(nestsDeeperThan(utf8(`{"a":"\\"[[[","b":${arrays(MAX_JSON_DEPTH)}}`))).toBe(true);
  });

  test("a small limit: the two paths agree with the real depth", () => {
    expect(nestsDeeperThan(utf8("[[[]]]"), 3)).toBe(false);
    expect(nestsDeeperThan(utf8("[[[[]]]]"), 3)).toBe(true);
    expect(nestsDeeperThan(utf8("[[],[],[],[]]"), 3)).toBe(false);
    expect(nestsDeeperThan(utf8('{"x":"[[[[[[[["}'), 3)).toBe(false);
  });
});

describe("the guard's parse (SPEC G-4)", () => {
  test("a body nested 40,000 deep (80 KB) is a 400 before it is parsed", () => {
    const r = parseJsonObject(utf8(bodyWith(arrays(40_000))));
    expect(r).toMatchObject({ ok: false, error: { kind: "invalid_request", status: 400, message: `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.` } });
  });

  test("the real clients' requests pass and parse unchanged", async () => {
    for (const name of ["claude-code-tool-use-2", "codex-tool-use-2", "claude-code-prefix"]) {
      const text = await Bun.file(`${FIXTURES}/clients/${name}.json`).text();
      const r = parseJsonObject(utf8(text));
      expect(r.ok ? r.value : r.error).toEqual(JSON.parse(text));
    }
  });
});
