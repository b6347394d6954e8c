/**
 * Which client key limit counters an instance runs (SPEC 9.6, D-2), and with them what keeps their
 * budget windows:
 *
 * - the embedded store (SQLite): {@link MemoryKeyCounters}, whose budget windows survive restarts in the
 *   store's `key_budget_windows` (read back at start, written with each usage flush and at shutdown:
 *   {@link persistBudgetWindows});
 * - a shared store (PostgreSQL): {@link SharedKeyCounters}, counting across instances in rows of their
 *   own. Until 2026-12-04 an instance there also read the stored budget windows into memory counters
 *   that nothing used, and had every usage flush carry their (always empty) changes; the PostgreSQL
 *   store no longer reads or writes that table (it stays, so that earlier versions still start on it).
 */
import type { Clock, KeyLimitCounters } from "../../pipeline/ports.ts";
import type { Store } from "../store/types.ts";
import { MemoryKeyCounters, persistBudgetWindows, type BudgetWindowPersistence } from "./counters.ts";
import { SharedKeyCounters } from "./shared-counters.ts";

/**
 * The key limit counters for `store`, and on the embedded store the persistence of their budget
 * windows (stop it and `save` at shutdown); a read failure of the stored windows is logged through
 * `log` and budgets start empty.
 */
export async function keyLimitCounters(store: Store, clock: Clock, log: (line: string) => void): Promise<{ counters: KeyLimitCounters; budgetWindows?: BudgetWindowPersistence }> {
  const { loadKeyBudgets, saveKeyBudgets, writeKeyBudgetsWithFlush } = store;
  if (store.shared || !loadKeyBudgets || !saveKeyBudgets) return { counters: new SharedKeyCounters(store, log, { keys: () => store.activeKeys() }) };
  const counters = new MemoryKeyCounters(clock.monotonic ? () => clock.monotonic!() : undefined);
  const windows = { loadKeyBudgets: loadKeyBudgets.bind(store), saveKeyBudgets: saveKeyBudgets.bind(store), writeKeyBudgetsWithFlush: writeKeyBudgetsWithFlush?.bind(store) };
  return { counters, budgetWindows: await persistBudgetWindows(counters, windows, () => clock.now(), log) };
}
