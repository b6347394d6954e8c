/**
 * What the command line writes to the terminal (src/cli/terminal.ts, src/cli/table.ts): strings a
 * client, an upstream or the store chose reach it escaped, bidi controls and line separators included,
 * so a model name with U+202E cannot reverse how its table row reads and a stored tag with a line break
 * cannot fake a line; a table's cut cell keeps an emoji and an escape whole.
 */
import { describe, expect, test } from "bun:test";
import { changedLimitsLine } from "../../src/cli/keys-command.ts";
import { describeBudgetUse, dollars } from "../../src/cli/key-limits.ts";
import { cutCell, table } from "../../src/cli/table.ts";
import { printable, visible } from "../../src/cli/terminal.ts";

describe("escaping", () => {
  test("bidi controls and U+2028/2029 are escaped: a model name with U+202E does not reverse its row", () => {
    expect(visible("oc/m\u202egpt\u202c")).toBe("oc/m\\u202egpt\\u202c");
    expect(visible("a\u2066b\u2069c\u2067d\u2068e\u202a\u202b\u202d\u200e\u200f\u061c")).toBe("a\\u2066b\\u2069c\\u2067d\\u2068e\\u202a\\u202b\\u202d\\u200e\\u200f\\u061c");
    expect(visible("one\u2028two\u2029three")).toBe("one\\u2028two\\u2029three");
    const row = table(["model", "requests"], [["oc/\u202emodel", 3]]).split("\n")[1];
    expect(row).toBe("oc/\\u202emodel  3");
    expect(row).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });

  test("printable (a setup diff of the user's files) keeps line breaks and tabs, escapes ESC, OSC, C1 and bidi controls", () => {
    const diff = "+model = \"x\"\n+\tkey = 1\n+title = \"\u001b]0;pwned\u0007\u009b31m\u202e\"\n";
    expect(printable(diff)).toBe("+model = \"x\"\n+\tkey = 1\n+title = \"\\u001b]0;pwned\\u0007\\u009b31m\\u202e\"\n");
  });

  test("keys set's limits line: a stored tag with a line break stays on the line, escaped", () => {
    const line = changedLimitsLine({ limits: { rpm: 60 }, tag: "team-a\nlimits: rpm 999999\u202e" }, false, describeBudgetUse, dollars);
    expect(line).toBe("limits: rpm 60; tag team-a\\nlimits: rpm 999999\\u202e");
  });
});

describe("table cell cut", () => {
  test("a long cell is cut between code points: an emoji across the cut is kept whole or left out, never half (U+FFFD)", () => {
    const cell = `${"m".repeat(62)}😀${"x".repeat(10)}`;
    const cut = cutCell(cell);
    expect(cut).toBe(`${"m".repeat(62)}😀…`);
    expect([...cut]).toHaveLength(64);
    expect(cut.isWellFormed()).toBe(true);
    const cut2 = cutCell(`${"m".repeat(63)}😀${"x".repeat(10)}`);
    expect(cut2).toBe(`${"m".repeat(63)}…`);
    expect(cut2.isWellFormed()).toBe(true);
    // 64 code points (emoji are 2 UTF-16 units each) fit: not cut
    const emoji = "😀".repeat(64);
    expect(cutCell(emoji)).toBe(emoji);
  });

  test("a cut never ends inside an escape visible() wrote (a stray \\u00 or \\)", () => {
    const name = visible(`${"m".repeat(60)}\u001b[31m${"x".repeat(10)}`); // \u001b at code points 61-66
    expect(cutCell(name)).toBe(`${"m".repeat(60)}…`);
    const lf = visible(`${"m".repeat(62)}\n${"x".repeat(10)}`); // \n at 63-64
    expect(cutCell(lf)).toBe(`${"m".repeat(62)}…`);
    const row = table(["model", "n"], [[`${"m".repeat(60)}\u001b${"x".repeat(10)}`, 1]]).split("\n")[1];
    expect(row).toStartWith(`${"m".repeat(60)}…`);
  });
});
