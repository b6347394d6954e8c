/**
 * The undo of rotates that committed after their 503 (src/store/postgres/undo-rotates.ts), in every
 * order: a rotate retried after its 503 reads the first one's secret as its old one; each undo reads the
 * row as it is when it runs. Whatever the order, the row ends with the secret from before both (and a
 * rotate shown in between keeps, as its previous secret, the one the clients hold).
 */
import { expect, test } from "bun:test";
import { type SecretColumns, UndoneRotates } from "../../src/store/postgres/undo-rotates.ts";

const start: SecretColumns = { hash: "h0", prev_hash: null, prev_until: null, prefix: "p0", rotated_at: null };

/** The row after a rotate to `hash` (with a grace: the secret before stays until 1000). */
function rotate(row: SecretColumns, hash: string, grace: boolean): SecretColumns {
  return { hash, prev_hash: grace ? row.hash : null, prev_until: grace ? 1000 : null, prefix: "p-" + hash, rotated_at: 1 };
}

for (const grace of [false, true]) {
  // cN: rotate N commits (late); aN: its late answer reaches the store, which records it and sends its
  // undo; uN: that undo runs (each after its own aN; the row lock orders them with the commits)
  for (const order of [
    ["c1", "a1", "c2", "a2", "u1", "u2"],
    ["c1", "a1", "c2", "a2", "u2", "u1"],
    ["c1", "a1", "c2", "u1", "a2", "u2"],
    ["c1", "a1", "u1", "c2", "a2", "u2"],
    ["c1", "c2", "a2", "u2", "a1", "u1"],
  ]) {
    test(`two late rotates (grace ${grace}), steps ${order.join(" ")}: the first secret is back, nothing of either rotate left`, () => {
      const undone = new UndoneRotates();
      let row = start;
      const before: Record<string, SecretColumns> = {};
      for (const step of order) {
        const n = step[1]!;
        if (step[0] === "c") {
          before[n] = row;
          row = rotate(row, "h" + n, grace);
        } else if (step[0] === "a") {
          undone.add("h" + n, before[n]!);
        } else {
          row = undone.undone(row) ?? row;
        }
      }
      expect(row).toEqual(start);
    });
  }

  test(`a late rotate, then one shown (grace ${grace}), then the late one's undo: the shown secret stays, its previous secret is the one the clients held`, () => {
    const undone = new UndoneRotates();
    const late = rotate(start, "h1", true);
    undone.add("h1", start);
    const shown = rotate(late, "h2", grace);
    const row = undone.undone(shown) ?? shown;
    expect(row).toEqual({ ...shown, prev_hash: grace ? "h0" : null });
  });
}

test("two late rotates (c1 a1 c2 u1 a2), then one shown with a grace, then the second's undo: the shown one's previous secret walks back through both to the one the clients held", () => {
  // review27: only the first step of that walk back was tested (a `break` after it passed every test).
  const undone = new UndoneRotates();
  const r1 = rotate(start, "h1", true);
  undone.add("h1", start); // c1 a1
  let row = rotate(r1, "h2", true); // c2
  row = undone.undone(row) ?? row; // u1
  undone.add("h2", r1); // a2
  const shown = rotate(row, "h3", true);
  row = undone.undone(shown) ?? shown; // u2
  expect(row).toEqual({ ...shown, prev_hash: "h0" });
});
