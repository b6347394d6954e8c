/**
 * The shared store's upgrade warning across schema 22 (key budget windows opened at first use, where
 * earlier versions align them to the epoch): an instance of an earlier version still running counts a
 * window opened meanwhile apart from the upgraded ones (the upgrade tryout of 2026-12-07: a 100-token
 * budget let all 8 requests of 18 tokens through, its alerts were posted twice, and the earlier
 * instance's 90 tokens were lost from the window once it was upgraded). The warning says so, and the
 * safe order; an upgrade that does not cross 22 does not.
 */
import { expect, test } from "bun:test";
import { upgradeWarning } from "../../src/store/open.ts";
import { PG_MIGRATIONS } from "../../src/store/postgres/migrations.ts";

const steps = (from: number) => PG_MIGRATIONS.filter((m) => m.version > from).map((m) => m.name);

test("an upgrade across schema 22 says that key budgets are counted apart while earlier instances run, and to stop them first", () => {
  for (const from of [7, 8, 21]) {
    const said = upgradeWarning({ from, to: PG_MIGRATIONS.at(-1)!.version, steps: steps(from) });
    expect(said).toContain("key budgets: an instance from before schema 22 aligns a key's budget window to multiples of its length since the epoch (a day's to midnight UTC)");
    expect(said).toContain("is counted apart by each: each lets the key spend the whole budget and posts its own budget alerts");
    expect(said).toContain("the earlier instance's use is not in the upgraded instances' window once it stops");
    expect(said).toEndWith("where budgets matter, stop every instance of an earlier version before starting the first upgraded one");
  }
});

test("an upgrade that does not cross schema 22 says nothing of budgets", () => {
  expect(upgradeWarning({ from: 20, to: 21, steps: ["unpriced requests per budget share"] })).not.toContain("budgets");
});
