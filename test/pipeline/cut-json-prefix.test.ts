/**
 * Found in session 45's list ("Not done yet"; fixed in session 46). pipeline/whole-reply-bound.ts
 * isCutJson counted a JSON reply ending inside a malformed number (`{"a":1.e`) as cut (a 5xx-row
 * failure, retried on the same account), though no more bytes could make `1.e` a number (RFC 8259 §6:
 * a fraction needs a digit). Likewise a string ending after an escape that is none (`\x`).
 *
 * Expected: a text is cut only when a longer text could parse: `1.`, `-`, `1e+`, `1.5E`, `\u12` at the
 * very end are; `1.e`, `01`, `-.`, `\x` are not, at the end or followed by more bytes; a malformed
 * number followed by more bytes is not either. Before the fix: `{"a":1.e`, `[-0.e`, `{"a":"\x`,
 * `{"a":"\u12g` were cut.
 */
import { describe, expect, test } from "bun:test";
import { isCutJson, notJsonError } from "../../pipeline/whole-reply-bound.ts";

/** Each text with whether a longer body could still parse. */
const CASES: [string, boolean][] = [
  ['{"a":1', true],
  ['{"a":1.', true],
  ['{"a":-', true],
  ['{"a":1e', true],
  ['{"a":1e+', true],
  ['{"a":1.5E-', true],
  ['{"a":0.25e1', true],
  ["[0", true],
  ["[-0.", true],
  ['{"a":tr', true],
  ['{"a":"x\\', true],
  ['{"a":"\\u12', true],
  ['{"a":"\\u0041\\n', true],
  ['{"a":1.e', false],
  ['{"a":1.E+', false],
  ["[-0.e", false],
  ['{"a":01', false],
  ['{"a":-.', false],
  ['{"a":1.e5}', false],
  ['{"a":1.,', false],
  ['{"a":-}', false],
  ['{"a":1e+]', false],
  ['{"a":"\\x', false],
  ['{"a":"\\u12g', false],
  ['{"a":"\\u12"', false],
  ['{"a":trux', false],
];

describe("isCutJson: cut only what more bytes could make valid", () => {
  for (const [text, cut] of CASES) {
    test(`${text} -> ${cut ? "cut" : "not a cut"}`, () => {
      expect(isCutJson(text)).toBe(cut);
    });
  }

  test("what the client is told: a cut is upstream_truncated, a malformed number upstream_invalid_json", () => {
    const code = (t: string) => notJsonError(new TextEncoder().encode(t)).code;
    expect([code('{"a":1.'), code('{"a":1.e'), code('{"a":1.e,"b":2}')]).toEqual(["upstream_truncated", "upstream_invalid_json", "upstream_invalid_json"]);
  });
});
